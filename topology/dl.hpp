#pragma once
// A shared library loaded at run time (dlopen), for what the probe uses only when the node has
// it: NVML (the GPU driver) and libibverbs (rdma-core). railkit itself links neither, so it
// starts on a node with no GPU driver and no rdma-core.
#include <dlfcn.h>

namespace railkit::topo {

class DlLibrary {
 public:
  explicit DlLibrary(const char* name) : h_(dlopen(name, RTLD_NOW | RTLD_LOCAL)) {}
  ~DlLibrary() {
    if (h_) dlclose(h_);
  }
  DlLibrary(const DlLibrary&) = delete;
  DlLibrary& operator=(const DlLibrary&) = delete;
  explicit operator bool() const { return h_ != nullptr; }
  /// The symbol `name` as a function pointer of type F; null when absent.
  template <class F>
  F sym(const char* name) const {
    return h_ ? reinterpret_cast<F>(dlsym(h_, name)) : nullptr;
  }

 private:
  void* h_;
};

}  // namespace railkit::topo
