#include "ptxrt/tune/tune_worker.hpp"

#include <algorithm>
#include <chrono>
#include <istream>
#include <nlohmann/json.hpp>
#include <ostream>

#include "ptxrt/core/error.hpp"
#include "ptxrt/core/log.hpp"
#include "support/child_process.hpp"
#include "support/quoted.hpp"
#include "tune/seconds_since.hpp"

namespace ptxrt {

using nlohmann::json;

namespace {

Measurement failed(const TuningConfig& config, MeasurementStatus status, std::string detail) {
  return {.config = config, .status = status, .detail = std::move(detail)};
}

json config_json(const TuningConfig& config) {
  json object = json::object();
  for (const Define& define : config.defines()) object[define.name] = define.value;
  return object;
}

// An exception's message need not be UTF-8, which JSON requires: such bytes go as U+FFFD.
void answer(std::ostream& out, const json& reply) {
  out << reply.dump(-1, ' ', false, json::error_handler_t::replace) << '\n' << std::flush;
}

json measurement_reply(const Measurement& measurement, bool restart) {
  return {{"measurement", json::parse(measurement_to_json(measurement))}, {"restart", restart}};
}

// The session's seconds of `now` not yet reported in `reported`: what an answer carries.
json phases_since(const TunePhases& now, const TunePhases& reported) {
  return {{"reference_seconds", now.reference_seconds - reported.reference_seconds},
          {"verification_seconds", now.verification_seconds - reported.verification_seconds},
          {"timing_seconds", now.timing_seconds - reported.timing_seconds}};
}

// A worker's "phases", read as far as they are numbers: they only inform the report.
TunePhases phases_of(const json& reply) {
  TunePhases phases;
  const json& given = reply.contains("phases") ? reply["phases"] : json();
  const auto seconds = [&given](const char* name) {
    return given.is_object() && given.contains(name) && given[name].is_number()
               ? std::max(0.0, given[name].get<double>())
               : 0.0;
  };
  phases.reference_seconds = seconds("reference_seconds");
  phases.verification_seconds = seconds("verification_seconds");
  phases.timing_seconds = seconds("timing_seconds");
  return phases;
}

}  // namespace

TunePhases& TunePhases::operator+=(const TunePhases& other) {
  compile_seconds += other.compile_seconds;
  worker_start_seconds += other.worker_start_seconds;
  worker_start_wait_seconds += other.worker_start_wait_seconds;
  reference_seconds += other.reference_seconds;
  verification_seconds += other.verification_seconds;
  timing_seconds += other.timing_seconds;
  return *this;
}

WorkerMeasurer::WorkerMeasurer(std::vector<std::string> command, std::optional<int> device,
                               std::chrono::seconds config_timeout,
                               std::chrono::seconds startup_timeout)
    : command_(std::move(command)),
      device_(device),
      config_timeout_(config_timeout),
      startup_timeout_(startup_timeout) {}

WorkerMeasurer::~WorkerMeasurer() = default;

void WorkerMeasurer::start() {
  if (worker_) return;
  worker_ = std::make_unique<detail::ChildProcess>(command_);
  ready_ = false;
  started_at_ = std::chrono::steady_clock::now();
  ++workers_started_;
}

detail::ChildProcess& WorkerMeasurer::worker() {
  start();
  if (ready_) return *worker_;
  const auto waiting = std::chrono::steady_clock::now();
  const std::optional<std::string> line = worker_->read_line(startup_timeout_);
  phases_.worker_start_wait_seconds += detail::seconds_since(waiting);
  phases_.worker_start_seconds += detail::seconds_since(started_at_);
  std::string problem;
  if (!line) {
    problem = "the tuning worker did not get ready: it " + worker_->terminate();
  } else {
    const json reply = json::parse(*line, nullptr, false);
    ready_ = reply.is_object() && reply.value("ready", false);
    if (ready_) return *worker_;
    problem = reply.is_object() && reply.contains("error")
                  ? "the tuning worker could not start: " + reply["error"].get<std::string>()
                  : "the tuning worker said '" + *line + "' instead of ready";
    worker_->terminate();
  }
  worker_.reset();
  throw Error(ErrorKind::driver, problem);
}

std::optional<std::string> WorkerMeasurer::ask(const std::string& request, std::string& failure) {
  detail::ChildProcess& child = worker();
  std::optional<std::string> line;
  const bool sent = child.send_line(request);
  if (sent) line = child.read_line(config_timeout_);
  if (line) return line;
  const bool hung = sent && !child.closed();
  const std::string ended = child.terminate();
  failure = hung ? "no answer within " + std::to_string(config_timeout_.count()) +
                       " s: the worker was stopped (" + ended + ")"
                 : "the worker " + ended + " while running it";
  worker_.reset();
  return std::nullopt;
}

Measurement WorkerMeasurer::measure(const Candidate& candidate, std::optional<double> best_ms) {
  Measurement measurement = measure_on_worker(candidate, best_ms);
  measurement.device = device_;
  return measurement;
}

Measurement WorkerMeasurer::measure_on_worker(const Candidate& candidate,
                                              std::optional<double> best_ms) {
  const json request{{"config", config_json(candidate.config)},
                     {"best_ms", best_ms ? json(*best_ms) : json()}};
  std::string failure;
  const std::optional<std::string> line = ask(request.dump(), failure);
  if (!line) return failed(candidate.config, MeasurementStatus::crashed, failure);
  const json reply = json::parse(*line, nullptr, false);
  if (!reply.is_object() || !reply.contains("measurement")) {
    worker_.reset();
    return failed(candidate.config, MeasurementStatus::crashed,
                  "the worker answered '" + *line + "'");
  }
  phases_ += phases_of(reply);
  Measurement measurement = measurement_from_json(reply["measurement"].dump());
  if (reply.value("restart", false)) worker_.reset();
  return measurement;
}

std::optional<Measurement> WorkerMeasurer::peer() {
  std::string failure;
  std::optional<std::string> line;
  try {
    line = ask(json{{"peer", true}}.dump(), failure);
  } catch (const Error& error) {
    failure = error.what();
  }
  if (!line) {
    // The tune's results stand without the comparison.
    log::write(log::Level::warning, "timing the peer failed: " + failure);
    return std::nullopt;
  }
  const json reply = json::parse(*line, nullptr, false);
  if (!reply.is_object() || !reply.contains("measurement")) return std::nullopt;
  Measurement measurement = measurement_from_json(reply["measurement"].dump());
  measurement.device = device_;
  return measurement;
}

std::vector<std::string> timing_arguments(const TimingPolicy& policy) {
  std::vector<std::string> words{"--l2", std::string(to_string(policy.l2))};
  if (policy.observe_power) words.insert(words.end(), {"--observe", "power"});
  return words;
}

bool parse_observation(std::string_view text, std::string_view user) {
  if (text == "power") return true;
  if (text == "none") return false;
  throw Error(
      ErrorKind::invalid_argument,
      std::string(user) + " " + detail::quoted(text) +
          ": expected power (energy, power, SM clock and temperature through NVML) or none");
}

void tie_worker_to_parent() { detail::tie_to_parent(); }

int run_tune_worker(const std::function<std::unique_ptr<TuneSession>()>& open,
                    const TimingPolicy& policy, std::istream& in, std::ostream& out) {
  std::unique_ptr<TuneSession> session;
  try {
    session = open();
  } catch (const std::exception& error) {
    answer(out, {{"error", error.what()}});
    return 1;
  }
  answer(out, {{"ready", true}});
  TunePhases reported;
  for (std::string line; std::getline(in, line);) {
    const json request = json::parse(line, nullptr, false);
    if (!request.is_object()) {
      answer(out, {{"error", "not a request: " + line}});
      return 1;
    }
    if (request.contains("peer")) {
      std::optional<Measurement> peer;
      try {
        peer = session->peer(policy);
      } catch (const std::exception& error) {
        log::write(log::Level::warning, std::string("timing the peer failed: ") + error.what());
      }
      answer(out, peer ? measurement_reply(*peer, false) : json{{"peer", nullptr}});
      continue;
    }
    std::vector<Define> defines;
    for (const auto& [name, value] : request.at("config").items())
      defines.push_back({name, value.get<std::string>()});
    const TuningConfig config(std::move(defines));
    const json& best = request.at("best_ms");
    const std::optional<double> best_ms =
        best.is_number() ? std::optional<double>(best.get<double>()) : std::nullopt;
    try {
      Measurement measurement = session->measure(config, policy, best_ms);
      measurement.config = config;
      json reply = measurement_reply(measurement, false);
      const TunePhases now = session->phases();
      reply["phases"] = phases_since(now, reported);
      reported = now;
      answer(out, reply);
    } catch (const std::exception& error) {
      answer(out, measurement_reply(failed(config, MeasurementStatus::failed, error.what()), true));
      return 1;
    }
  }
  return 0;
}

}  // namespace ptxrt
