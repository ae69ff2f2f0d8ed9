// What `ptxrt` says when its command line does not parse: one line naming the command, with the
// closest command or option when a name is mistyped. CLI11 alone reports "The following arguments
// were not expected: compiel x", without saying that "compiel" was meant as a command, and
// suggests no option.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ptxrt::cli {

// The number of single-character insertions, deletions, substitutions and swaps of neighbours
// that turn `from` into `to` (the optimal string alignment distance): 1 for "compiel" and
// "compile".
std::size_t edit_distance(std::string_view from, std::string_view to);

// Among `names`, the one closest to `word` when it is close enough to be a typo of it (at most
// one edit per three characters of `word`, and at least one edit allowed); the first of equals.
std::optional<std::string> closest_name(std::string_view word,
                                        const std::vector<std::string>& names);

// After a failed parse of `arguments` (argv without the program's name): when a word stands where
// a command name must be (under `app` or one of its command groups, e.g. `cache`) and names no
// command, "unknown command 'cache wram' (did you mean 'cache warm'?)", or the commands listed
// when none is close; otherwise nullopt, and CLI11's own message stands.
std::optional<std::string> unknown_command_message(const CLI::App& app,
                                                   const std::vector<std::string>& arguments);

// After a parse of `arguments` that left `extras` (the words CLI11 did not expect): for a word
// that looks like an option ("--arhc", "--arhc=sm_90"), "unknown option '--arhc' for 'ptxrt
// compile' (did you mean '--arch'?)"; for another, "unexpected argument 'x' for 'ptxrt
// compile'"; joined by "; ".
std::string unexpected_arguments_message(const CLI::App& app,
                                         const std::vector<std::string>& arguments,
                                         const std::vector<std::string>& extras);

// The command the arguments name, under `app`: "ptxrt compile", "ptxrt cache warm"; "ptxrt"
// before any.
std::string command_path(const CLI::App& app, const std::vector<std::string>& arguments);

}  // namespace ptxrt::cli
