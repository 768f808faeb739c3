// Fuzz target: the kubeconfig loader on arbitrary file contents. A broken
// file is an error with a message, never a crash.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include "toysched/kube/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/toysched-fuzz-kubeconfig." + std::to_string(getpid());
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  auto r = toysched::kube::load_kubeconfig({path});
  if (!r && r.error().message.find('\n') != std::string::npos) std::abort();  // one line, always
  return 0;
}
