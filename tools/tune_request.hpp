// What `ptxrt tune` records of itself in the tuning database, so that `ptxrt tune resume` carries
// an interrupted tune on from the database alone: the options as the user gave them, each by its
// long name, read from the command's own parser. An option added to `tune` later is recorded and
// resumed with no change here.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace ptxrt::cli {

// The options given to `tune` (a parsed CLI11 command) as one JSON object: a flag as true, an
// option as the list of its values, the kernel as "kernel"; the kernel file, --problem and
// --source made absolute, so that a resume from another folder finds them. Not recorded: what a
// resume gives itself (--db, --resume, --continues) and --worker.
nlohmann::json tune_request(const CLI::App& tune);

// The arguments after `ptxrt` that run `request` through `tune`'s parser again: "tune", then
// each option as --NAME=VALUE (a flag as --NAME), the kernel last after "--". Error
// (invalid_argument) naming `where` (the request in its database) for a field that is no option
// of `tune` (a request recorded by a later ptxrt) or not of an option's shape.
std::vector<std::string> request_arguments(const nlohmann::json& request, const CLI::App& tune,
                                           std::string_view where);

}  // namespace ptxrt::cli
