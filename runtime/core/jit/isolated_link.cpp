#include "jit/isolated_link.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <csignal>
#include <cstring>
#include <filesystem>

#include "ptxrt/core/error.hpp"
#include "ptxrt/core/program.hpp"
#include "support/child_process.hpp"
#include "support/quoted.hpp"

namespace ptxrt {
namespace {

constexpr std::string_view isolated_link_flag = "--ptxrt-isolated-link";
constexpr std::string_view request_magic = "ptxrt-link-request 1\n";
// What the child wrote on stderr is searched only for "LLVM ERROR", which ends it: its last part.
constexpr std::size_t kept_error_bytes = 64 * 1024;
// Longest decimal field length: 2^64 has 20 digits.
constexpr std::size_t longest_length = 20;

// Each field is its length in decimal, a newline, then its bytes: binary-safe and checkable.
void append_field(std::string& out, std::string_view value) {
  out += std::to_string(value.size());
  out += '\n';
  out += value;
}

[[noreturn]] void malformed(const std::string& what) {
  throw Error(ErrorKind::invalid_argument, "malformed isolated link request: " + what);
}

class FieldReader {
 public:
  explicit FieldReader(std::string_view bytes) : rest_(bytes) {}

  std::string_view field() {
    const std::size_t newline = rest_.substr(0, longest_length + 1).find('\n');
    if (newline == std::string_view::npos) malformed("a field length is missing");
    std::size_t size = 0;
    const auto [end, error] = std::from_chars(rest_.data(), rest_.data() + newline, size);
    if (error != std::errc{} || end != rest_.data() + newline) malformed("a field length is bad");
    rest_.remove_prefix(newline + 1);
    if (size > rest_.size()) malformed("a field runs past the end");
    const std::string_view value = rest_.substr(0, size);
    rest_.remove_prefix(size);
    return value;
  }

  // A count or enumerator, at most `largest`.
  std::size_t number(std::size_t largest) {
    const std::string_view text = field();
    std::size_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc{} || end != text.data() + text.size() || value > largest)
      malformed("a number is out of range");
    return value;
  }

  bool done() const { return rest_.empty(); }
  std::size_t left() const { return rest_.size(); }

 private:
  std::string_view rest_;
};

// The child's answer, on its stdout: "ok" then the output and the info log, or "error" then
// an Error's fields.
std::string encode_answer(const detail::LinkResult& result) {
  std::string answer = "ok\n";
  append_field(answer, result.output);
  append_field(answer, result.info_log);
  return answer;
}

std::string encode_answer(const Error& error) {
  std::string answer = "error\n";
  append_field(answer, std::to_string(static_cast<int>(error.kind())));
  append_field(answer, std::to_string(error.code()));
  for (const std::string_view text :
       {std::string_view(error.what()), std::string_view(error.call()),
        std::string_view(error.code_name()), std::string_view(error.context())})
    append_field(answer, text);
  return answer;
}

// Reads one field of the child's answer; nothing when the child ended or `deadline` passed.
std::optional<std::string> read_answer_field(detail::ChildProcess& child,
                                             std::chrono::steady_clock::time_point deadline) {
  auto left = [deadline] {
    return std::max(std::chrono::milliseconds(0),
                    std::chrono::duration_cast<std::chrono::milliseconds>(
                        deadline - std::chrono::steady_clock::now()));
  };
  const std::optional<std::string> length = child.read_line(left());
  if (!length) return std::nullopt;
  std::size_t size = 0;
  const auto [end, error] = std::from_chars(length->data(), length->data() + length->size(), size);
  if (error != std::errc{} || end != length->data() + length->size()) return std::nullopt;
  return child.read_bytes(size, left());
}

// "SIGSEGV" for 11.
std::string signal_name(int signal) {
  const char* abbreviation = sigabbrev_np(signal);
  return abbreviation ? std::string("SIG") + abbreviation : "signal " + std::to_string(signal);
}

// What nvJitLink did, from how the child ended without answering.
// `them` names the suspects: "it" or "them".
std::string failure_of(const std::string& status, const std::string& errors, bool timed_out,
                       std::chrono::milliseconds limit, std::string_view them) {
  if (timed_out)
    return "nvJitLink ran past " +
           (limit.count() % 1000 == 0 ? std::to_string(limit.count() / 1000) + " s"
                                      : std::to_string(limit.count()) + " ms") +
           " linking " + std::string(them);
  constexpr std::string_view killed = "killed by signal ";
  if (status.starts_with(killed))
    return "nvJitLink crashed linking " + std::string(them) + " (" +
           signal_name(std::atoi(status.c_str() + killed.size())) + ")";
  const std::size_t fatal = errors.rfind("LLVM ERROR: ");
  if (fatal != std::string::npos) {
    const std::size_t line_end = errors.find('\n', fatal);
    return "nvJitLink failed linking " + std::string(them) + " (" +
           detail::printable(errors.substr(fatal, line_end - fatal)) + ")";
  }
  return "the link process " + status + " without an answer";
}

// The caller's inputs that nvJitLink reads past ptxrt's checks (all but CUBIN and PTX, which
// check_device_code reads whole).
std::vector<const detail::LinkInput*> suspects_of(const detail::LinkRequest& request) {
  std::vector<const detail::LinkInput*> suspects;
  for (const detail::LinkInput& input : request.inputs)
    if (input.from_caller && input.type != NVJITLINK_INPUT_CUBIN &&
        input.type != NVJITLINK_INPUT_PTX)
      suspects.push_back(&input);
  return suspects;
}

// "b.ltoir: damaged LTO-IR" for one suspect, else "linking P for sm_90: b.ltoir, d.a may be
// damaged".
std::string describe_suspects(const detail::LinkRequest& request,
                              const std::vector<const detail::LinkInput*>& suspects) {
  if (suspects.size() == 1)
    return suspects.front()->name + ": damaged " + detail::input_type_name(suspects.front()->type);
  std::string names;
  for (const detail::LinkInput* input : suspects)
    names += (names.empty() ? "" : ", ") + input->name;
  return "linking " + request.program + " for " + request.arch + ": " +
         (names.empty() ? std::string("its inputs") : names) + " may be damaged";
}

// What link_in_child_process gives the child on its stdin, and how the child reads it back.
std::string encode_link_request(const detail::LinkRequest& request) {
  std::string bytes(request_magic);
  append_field(bytes, request.program);
  append_field(bytes, request.arch);
  append_field(bytes, std::to_string(static_cast<int>(request.format)));
  append_field(bytes, request.lto ? "1" : "0");
  append_field(bytes, request.resource_usage ? "1" : "0");
  append_field(bytes, std::to_string(request.options.size()));
  for (const std::string& option : request.options) append_field(bytes, option);
  append_field(bytes, std::to_string(request.inputs.size()));
  for (const detail::LinkInput& input : request.inputs) {
    append_field(bytes, std::to_string(static_cast<int>(input.type)));
    append_field(bytes, input.from_caller ? "1" : "0");
    append_field(bytes, input.name);
    append_field(bytes, input.bytes);
  }
  return bytes;
}

detail::LinkRequest decode_link_request(std::string_view bytes) {
  if (!bytes.starts_with(request_magic)) malformed("it does not start with its magic line");
  FieldReader reader(bytes.substr(request_magic.size()));
  detail::LinkRequest request;
  request.program = reader.field();
  request.arch = reader.field();
  request.format = static_cast<ImageFormat>(reader.number(static_cast<int>(ImageFormat::ltoir)));
  request.lto = reader.number(1) == 1;
  request.resource_usage = reader.number(1) == 1;
  // Every field takes at least two bytes, which bounds any count by what is left.
  for (std::size_t count = reader.number(reader.left()); count > 0; --count)
    request.options.emplace_back(reader.field());
  for (std::size_t count = reader.number(reader.left()); count > 0; --count) {
    detail::LinkInput input;
    input.type = static_cast<nvJitLinkInputType>(reader.number(NVJITLINK_INPUT_ANY));
    input.from_caller = reader.number(1) == 1;
    input.name = reader.field();
    input.bytes = reader.field();
    request.inputs.push_back(std::move(input));
  }
  if (!reader.done()) malformed("bytes follow its last field");
  return request;
}

}  // namespace

namespace detail {

std::vector<std::string> isolated_link_command() {
  return {std::filesystem::read_symlink("/proc/self/exe").string(),
          std::string(isolated_link_flag)};
}

LinkResult link_in_child_process(const LinkRequest& request,
                                 const std::vector<std::string>& command,
                                 std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  const FileDescriptor input = memory_file(encode_link_request(request), "ptxrt-link-request");
  // nvJitLink's own lines stay apart: only "LLVM ERROR" is taken from them, into the one error.
  const FileDescriptor errors = memory_file({}, "ptxrt-link-errors");
  ChildProcess child(command, input.get(), errors.get());
  const std::optional<std::string> verdict =
      child.read_line(std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now()));
  std::vector<std::string> fields;
  const std::size_t expected = verdict == "ok" ? 2 : verdict == "error" ? 6 : 0;
  while (fields.size() < expected)
    if (std::optional<std::string> field = read_answer_field(child, deadline))
      fields.push_back(std::move(*field));
    else
      break;
  const bool answered = expected > 0 && fields.size() == expected;
  const bool timed_out = !answered && !child.closed();
  const std::string status = child.terminate();
  if (answered && expected == 2) return {std::move(fields[0]), std::move(fields[1])};
  if (answered)
    throw Error(static_cast<ErrorKind>(
                    std::clamp(std::atoi(fields[0].c_str()), 0, static_cast<int>(ErrorKind::io))), std::move(fields[2]),
                std::move(fields[3]), std::atoi(fields[1].c_str()), std::move(fields[4]),
                std::move(fields[5]));
  std::string written = read_memory_file(errors);
  if (written.size() > kept_error_bytes) written.erase(0, written.size() - kept_error_bytes);
  const std::vector<const LinkInput*> suspects = suspects_of(request);
  throw Error(ErrorKind::invalid_argument,
              describe_suspects(request, suspects) + ": " +
                  failure_of(status, written, timed_out, limit,
                             suspects.size() == 1 ? "it" : "them"));
}

}  // namespace detail

std::optional<int> serve_isolated_link(int argc, char** argv) {
  if (argc < 2 || argv[1] != isolated_link_flag) return std::nullopt;
  detail::tie_to_parent();
  std::string answer;
  try {
    const detail::FileDescriptor standard_input(::dup(STDIN_FILENO));
    answer = encode_answer(detail::link(decode_link_request(
        detail::read_memory_file(standard_input))));
  } catch (const Error& error) {
    answer = encode_answer(error);
  } catch (const std::exception& error) {
    answer = encode_answer(Error(ErrorKind::link, error.what()));
  }
  detail::write_all(STDOUT_FILENO, answer);  // false only when the parent has gone
  return 0;
}

}  // namespace ptxrt
