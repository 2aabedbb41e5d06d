// railkit-bench: one process per rank under mpirun/srun. Thin: parse, run, map errors to exit codes.
#include <iostream>

#include "bench/app.hpp"
#include "bench/options.hpp"
#include "core/error.hpp"

int main(int argc, char** argv, char** envp) {
  using namespace railkit;
  const int hinted_rank = bench::launcher_rank(envp);
  const bool speaker = hinted_rank <= 0;  // only rank 0 (or a lone process) prints usage errors
  try {
    std::string help;
    const bench::ParsedCli cli = bench::parse_cli(argc, argv, help);
    if (cli.exit_now) {
      if (speaker) std::cout << (cli.show_version ? bench::version_text() : help);
      return cli.exit_code;
    }
    return bench::run_bench(cli.options, &argc, &argv, envp);
  } catch (const bench::QuietExit& e) {
    return exit_code(e.code());
  } catch (const bench::RankFailure& e) {
    // Other ranks may be waiting for this one in a collective: the line first, then every rank ends.
    bench::print_error_line(e.what(), e.rank());
    return bench::abort_every_rank(exit_code(e.code()));
  } catch (const UsageError& e) {
    if (speaker) bench::print_error_line(e.what());
    return exit_code(e.code());
  } catch (const Error& e) {
    bench::print_error_line(e.what(), hinted_rank);
    return exit_code(e.code());
  } catch (const std::exception& e) {
    std::cerr << "railkit-bench: internal error: " << e.what() << std::endl;
    return exit_code(ErrorCode::Internal);
  }
}
