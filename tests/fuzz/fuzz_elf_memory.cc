// libFuzzer target: the runner ELF reader (agent/runner/elf_memory.h), which reads uploaded
// runners: any bytes give a memory report or an error, never a read out of bounds.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "agent/runner/elf_memory.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/mculab-fuzz-elf-" + std::to_string(::getpid());
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return 0;
  if (size > 0) std::fwrite(data, 1, size, f);
  std::fclose(f);
  (void)mculab::agent::ReadElfMemory(path);
  return 0;
}
