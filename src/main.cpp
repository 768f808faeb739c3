// toy-scheduler's entry point: parse flags, then run.
#include <cstdio>
#include <iostream>
#include <variant>

#include "toysched/options.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto parsed = toysched::parse_options(std::move(args));
  if (auto* exit_now = std::get_if<toysched::ExitNow>(&parsed)) {
    if (!exit_now->out.empty()) std::cout << exit_now->out;
    if (!exit_now->err.empty()) std::cerr << exit_now->err << "\n";
    return exit_now->status;
  }
  // The scheduler itself (client, informers, cycle) is built on top of this.
  std::cerr << "toy-scheduler: flags are valid, but this build cannot schedule yet "
               "(the API client and scheduling loop are not in it)\n";
  return 1;
}
