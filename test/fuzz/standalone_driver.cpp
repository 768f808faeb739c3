// Runs a libFuzzer target without libFuzzer (g++ builds, `./dev test`'s
// smoke): every seed file of the corpus, then random mutations of them for
// the given number of seconds. The real, coverage-guided fuzzing is
// `./dev fuzz`, built with clang's -fsanitize=fuzzer.
//   usage: fuzz-X [seconds] [corpus-dir]
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  double seconds = argc > 1 ? std::atof(argv[1]) : 5.0;
  std::vector<std::string> seeds;
  if (argc > 2) {
    for (auto& e : std::filesystem::directory_iterator(argv[2])) {
      std::ifstream f(e.path(), std::ios::binary);
      std::stringstream ss;
      ss << f.rdbuf();
      seeds.push_back(ss.str());
    }
  }
  if (seeds.empty()) seeds.push_back("");
  for (auto& s : seeds) LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
  std::mt19937_64 rng(12345);
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  std::uint64_t runs = 0;
  const std::string alphabet = "{}[]\":,0123456789.-eEkKMGTPmunik\\ \n\r\tabcdefghijklmnopqrstuvwxyz:-/";
  while (std::chrono::steady_clock::now() < end) {
    std::string s = seeds[rng() % seeds.size()];
    int edits = 1 + static_cast<int>(rng() % 8);
    for (int i = 0; i < edits; ++i) {
      std::size_t pos = s.empty() ? 0 : rng() % (s.size() + 1);
      switch (rng() % 5) {
        case 0:
          if (!s.empty() && pos < s.size()) s.erase(pos, 1 + rng() % 8);
          break;  // delete
        case 1:
          s.insert(pos, 1, alphabet[rng() % alphabet.size()]);
          break;  // insert
        case 2:
          if (pos < s.size()) s[pos] = static_cast<char>(rng());
          break;  // flip
        case 3:
          if (!s.empty()) s.resize(rng() % (s.size() + 1));
          break;  // truncate
        case 4:
          if (!s.empty()) s.insert(pos, s.substr(rng() % s.size(), 1 + rng() % 32));
          break;  // duplicate
      }
    }
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
    ++runs;
  }
  std::printf("%llu runs, no crash\n", static_cast<unsigned long long>(runs));
  return 0;
}
