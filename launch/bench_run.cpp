#include "launch/bench_run.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "core/atomic_file.hpp"
#include "core/bench_flags.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/results.hpp"
#include "core/strings.hpp"

namespace railkit::launch {
namespace fs = std::filesystem;

void check_bench_args(const std::vector<std::string>& bench_args, std::string_view command) {
  if (sets_bench_flag(bench_args, BenchFlag::OutputFile))
    throw UsageError(fmt::format("bench arguments: {} is set by railkit {} (one results document per launch)",
                                 bench_flag_names(BenchFlag::OutputFile), command));
}

std::vector<std::string> bench_argv(const LauncherOptions& l, const BenchConfig& c, const std::string& bench,
                                    const std::vector<std::string>& bench_args, const std::string& results_path) {
  std::vector<std::string> program{bench};
  program.insert(program.end(), bench_args.begin(), bench_args.end());
  program.insert(program.end(), c.args.begin(), c.args.end());
  if (!sets_bench_flag(bench_args, BenchFlag::Label) && !sets_bench_flag(c.args, BenchFlag::Label)) {
    const auto label = bench_flag_args(BenchFlag::Label, c.name);
    program.insert(program.end(), label.begin(), label.end());
  }
  const auto output = bench_flag_args(BenchFlag::OutputFile, results_path);
  program.insert(program.end(), output.begin(), output.end());
  return world_argv(l, c.env, program);
}

std::string backend_arg(const std::vector<std::string>& bench_args) {
  return last_bench_flag_value(bench_args, BenchFlag::Backend).value_or("");
}

bool single_host(const LauncherOptions& l) {
  if (l.kind == LauncherKind::Local) return true;
  if (l.kind != LauncherKind::Mpirun || !l.hostfile.empty()) return false;
  for (const auto& a : l.args)
    for (std::string_view f : {"--host", "-H", "-host", "--hostfile", "-hostfile", "--machinefile", "-machinefile",
                               "--default-hostfile", "--rankfile", "-rf"})
      if (a == f || (a.size() > f.size() && a.compare(0, f.size(), f) == 0 && a[f.size()] == '=')) return false;
  return true;
}

ExpectedBackend backend_from_version(const std::string& version_text, bool this_host_only) {
  std::string line;
  for (const auto& l : split(version_text, '\n'))
    if (l.rfind("backends:", 0) == 0) line = l;
  if (line.empty()) return {"", "railkit-bench --version does not list its backends"};
  const bool nccl = line.find("nccl (") != std::string::npos;
  const bool mpi = line.find("mpi (") != std::string::npos && line.find("no mpi") == std::string::npos;
  if (!nccl) {
    if (mpi) return {"mpi", "--backend auto, and railkit-bench --version lists no nccl backend"};
    return {"", "railkit-bench --version lists neither an mpi nor an nccl backend"};
  }
  if (this_host_only && line.find("driver none") != std::string::npos)
    return {"mpi", "--backend auto, and this host, where every rank runs, has no GPU driver (railkit-bench --version)"};
  return {"", "--backend auto with the nccl backend built: a usable GPU on the nodes decides"};
}

ExpectedBackend expected_backend(const std::string& bench, const std::vector<std::string>& bench_args,
                                 const LauncherOptions& l, char* const* envp) {
  const std::string given = backend_arg(bench_args);
  if (given == "mpi" || given == "nccl" || given == "sim") return {given, "--backend " + given + " in the bench arguments"};
  std::string tmpl = (fs::temp_directory_path() / "railkit-bench-version-XXXXXX").string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) return {"", "--backend auto: railkit-bench --version could not be asked (no temporary file)"};
  ::close(fd);
  LaunchSpec spec;
  spec.argv = {bench, "--version"};
  spec.stdout_path = tmpl;
  spec.stderr_path = "/dev/null";
  spec.timeout_s = 30;
  spec.kill_grace_s = 1;
  const LaunchResult r = run_process(spec, envp);
  std::string text;
  if (r.ok()) {
    try {
      text = read_file(tmpl);
    } catch (const Error&) {
    }
  }
  std::error_code ec;
  fs::remove(tmpl, ec);
  if (text.empty()) return {"", "--backend auto, and " + bench + " --version did not answer"};
  return backend_from_version(text, single_host(l));
}

/// The most telling line of a stderr tail: the last one mentioning an error, outside the boxes
/// mpirun draws with rules of dashes (its output can cut a rank's line in two: a dangling
/// "error:" is joined with the next line outside the boxes); else the last line.
std::string telling_stderr_line(const std::string& tail) {
  struct Line {
    std::string text;
    bool boxed;
  };
  std::vector<Line> lines;
  bool in_box = false;
  for (const auto& raw : split(tail, '\n')) {
    std::string text;
    bool rule = false;
    for (size_t i = 0; i < raw.size();) {
      size_t j = i;
      while (j < raw.size() && raw[j] == '-') ++j;
      if (j - i >= 10) {
        rule = true;
        i = j;
      } else {
        text.append(raw, i, std::max<size_t>(j - i, 1));
        i = std::max(j, i + 1);
      }
    }
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
    if (rule) {
      lines.push_back({text, false});
      in_box = !in_box;
    } else {
      lines.push_back({text, in_box});
    }
  }
  for (size_t k = lines.size(); k-- > 0;) {
    if (lines[k].boxed || to_lower(lines[k].text).find("error") == std::string::npos) continue;
    std::string line = lines[k].text;
    if (line.size() >= 6 && to_lower(line.substr(line.size() - 6)) == "error:")
      for (size_t m = k + 1; m < lines.size(); ++m)
        if (!lines[m].boxed && !lines[m].text.empty()) {
          line += " " + lines[m].text;
          break;
        }
    return line;
  }
  for (size_t k = lines.size(); k-- > 0;)
    if (!lines[k].boxed && !lines[k].text.empty()) return lines[k].text;
  for (size_t k = lines.size(); k-- > 0;)
    if (!lines[k].text.empty()) return lines[k].text;
  return "";
}


TrialRun run_config(const LaunchContext& ctx, const BenchConfig& c, const std::string& base, char* const* envp,
                    const std::function<void(double)>& on_tick) {
  TrialRun out;
  ConfigRecord& r = out.record;
  r.name = c.name;
  r.env = c.env;
  r.args = c.args;
  r.stdout_file = base + ".stdout.txt";
  r.stderr_file = base + ".stderr.txt";
  const std::string results_rel = base + ".json";
  const fs::path results_abs = ctx.out_dir / results_rel;
  std::error_code ec;
  fs::remove(results_abs, ec);  // a document from an interrupted attempt must not pass for this one
  r.command = bench_argv(ctx.launcher, c, ctx.bench, ctx.bench_args, results_abs.string());
  r.started = utc_now_iso();

  LaunchSpec spec;
  spec.argv = r.command;
  spec.env_add = c.env;
  spec.stdout_path = ctx.out_dir / r.stdout_file;
  spec.stderr_path = ctx.out_dir / r.stderr_file;
  spec.timeout_s = ctx.timeout_s;
  spec.kill_grace_s = ctx.kill_grace_s;
  spec.on_tick = on_tick;
  out.launch = run_process(spec, envp);
  const LaunchResult& lr = out.launch;
  if (lr.end == LaunchResult::End::Interrupted) return out;

  r.elapsed_s = lr.elapsed_s;
  if (lr.end == LaunchResult::End::Exited) r.exit_code = lr.exit_code;
  bool have_doc = false;
  std::string doc_problem;
  if (fs::exists(results_abs)) {
    try {
      (void)load_results(results_abs.string());
      have_doc = true;
    } catch (const Error& e) {
      doc_problem = e.what();
    }
  } else {
    doc_problem = "no results document was written";
  }
  if (have_doc) r.results = results_rel;
  const std::string tail = file_tail(spec.stderr_path, 12, 3000);
  const std::string telling = telling_stderr_line(file_tail(spec.stderr_path, 80, 16384));
  if (lr.ok() && have_doc) {
    r.status = TrialStatus::Ok;
  } else {
    r.status = (lr.end == LaunchResult::End::TimedOut ||
                (lr.end == LaunchResult::End::Exited && lr.exit_code == exit_code(ErrorCode::Timeout)))
                   ? TrialStatus::Timeout
                   : TrialStatus::Failed;
    if (lr.end == LaunchResult::End::TimedOut)
      r.error = fmt::format("timed out (--timeout-s {}); its processes were ended", ctx.timeout_s);
    else if (lr.ok())
      r.error = "exit code 0 but " + doc_problem;
    else
      r.error = lr.describe();
    if (!telling.empty() && lr.end != LaunchResult::End::FailedToStart) r.error += ": " + telling;
    r.stderr_tail = tail;
  }
  return out;
}

}  // namespace railkit::launch
