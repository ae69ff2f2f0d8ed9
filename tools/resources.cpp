// `ptxrt resources`: what each kernel of a compiled CUBIN costs the SM, and the occupancy that
// follows, for every configuration of a sweep over compile-time constants. No GPU needed.
#include "ptxrt/core/resources.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <utility>

#include "apps/common/disassembly.hpp"
#include "apps/common/kernel_defines.hpp"
#include "cli.hpp"
#include "ptxrt/core/demangle.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/expression.hpp"
#include "ptxrt/core/manifest.hpp"
#include "ptxrt/core/occupancy.hpp"
#include "ptxrt/tune/tuner.hpp"
#include "support/quoted.hpp"

namespace ptxrt::cli {
namespace {

constexpr const char* json_fields =
    R"(JSON (--json): an array with one object per configuration, kernel and block size:
  defines                 object NAME -> VALUE: every constant in force (manifest defaults included)
  arch                    the architecture compiled for ("sm_90")
  kernel                  the kernel's name, demangled for C++ kernels: scale(float*, int)
  mangled_name            the entry symbol of a C++ kernel: _Z5scalePfi; null for extern "C"
  registers               32-bit registers per thread
  static_smem_bytes       the kernel's __shared__ variables per block
  constant_bytes          the module's __constant__ variables
  local_bytes             per-thread stack frame (local memory) of the kernel itself
  stack_bytes             per-thread stack including the deepest chain of callees
  spill_store_bytes       register spill stores (null when ptxas did not say)
  spill_load_bytes        register spill loads (null when ptxas did not say)
  barriers                named barriers per block
  max_threads_per_block   from __launch_bounds__; 0 = no bound
  block_threads           the block size the occupancy is for
  active_blocks_per_sm    blocks resident on one SM
  active_warps_per_sm     warps resident on one SM
  occupancy_percent       active warps over the SM's maximum, in percent
  limit                   what keeps more blocks off: warps, registers, shared_memory, blocks,
                          barriers, or none_fits
  reason                  why not even one block fits; empty otherwise
  file                    (a program of several files) the source whose ptxas report names the
                          kernel; empty after LTO, which compiles them as one
  sass                    (--sass) instruction counts of the kernel's machine code: instructions
                          (all that can execute), FFMA, LDG/STG (global), LDS/STS (shared),
                          LDL/STL (local), LDC (constant), BAR (barriers), BRA (branches))";

struct ResourcesArguments {
  std::string kernel;
  std::vector<std::string> defines;
  std::vector<std::string> sweeps;
  NvrtcArguments nvrtc;
  LinkArguments link;
  std::string arch = "auto";
  // Expressions of the defines ("256", "TILE_WIDTH*TILE_WIDTH"); none: each kernel's
  // __launch_bounds__, else 256.
  std::vector<std::string> blocks;
  bool json = false;
  bool sass = false;
};

struct Sweep {
  std::string name;
  std::vector<std::string> values;
};

struct Row {
  std::vector<Define> defines;
  std::string arch;
  KernelResources kernel;
  int block_threads = 0;
  Occupancy occupancy;
  std::string file;  // of a linked program: the source the kernel was compiled in
  std::optional<apps::KernelInstructions> instructions;  // with --sass
};

Sweep parse_sweep(const std::string& text) {
  const std::size_t equals = text.find('=');
  Sweep sweep{text.substr(0, equals), {}};
  if (equals == std::string::npos || !is_identifier(sweep.name))
    throw Error(ErrorKind::invalid_argument,
                "--sweep " + text + ": expected NAME=v1,v2,... with NAME a C identifier");
  std::istringstream values(text.substr(equals + 1));
  for (std::string value; std::getline(values, value, ',');) {
    if (value.empty())
      throw Error(ErrorKind::invalid_argument, "--sweep " + text + " has an empty value");
    sweep.values.push_back(value);
  }
  if (sweep.values.empty())
    throw Error(ErrorKind::invalid_argument, "--sweep " + text + " lists no values");
  return sweep;
}

// The cartesian product of the sweeps, each configuration after the fixed defines.
std::vector<std::vector<Define>> configurations(const std::vector<Define>& fixed,
                                                const std::vector<Sweep>& sweeps) {
  std::vector<std::vector<Define>> product{fixed};
  for (const Sweep& sweep : sweeps) {
    std::vector<std::vector<Define>> extended;
    for (const std::vector<Define>& configuration : product)
      for (const std::string& value : sweep.values) {
        extended.push_back(configuration);
        extended.back().push_back({sweep.name, value});
      }
    product = std::move(extended);
  }
  return product;
}

// "64,min(TILE_WIDTH*TILE_WIDTH, 512)" as its two items: split at the commas outside parentheses.
std::vector<std::string> top_level_items(const std::vector<std::string>& texts) {
  std::vector<std::string> items;
  for (const std::string& text : texts) {
    int depth = 0;
    std::string item;
    for (const char c : text) {
      depth += c == '(' ? 1 : c == ')' ? -1 : 0;
      if (c == ',' && depth == 0) {
        items.push_back(std::exchange(item, {}));
        continue;
      }
      item += c;
    }
    items.push_back(item);
  }
  return items;
}

// The block sizes to report `kernel` at for one configuration: each --block expression's value
// under its defines, or the kernel's __launch_bounds__ (else 256) when none is given.
std::vector<int> block_sizes(const std::vector<std::string>& texts, const Image& image,
                             const KernelResources& kernel) {
  if (texts.empty()) return {kernel.max_threads_per_block > 0 ? kernel.max_threads_per_block : 256};
  auto lookup = [&image](std::string_view name) -> std::optional<std::int64_t> {
    for (const Define& define : image.defines) {
      std::int64_t value = 0;
      const auto [end, error] =
          std::from_chars(define.value.data(), define.value.data() + define.value.size(), value);
      if (define.name == name && error == std::errc() &&
          end == define.value.data() + define.value.size())
        return value;
    }
    return std::nullopt;
  };
  std::vector<int> sizes;
  for (const std::string& text : top_level_items(texts)) {
    const std::string where =
        "--block " + detail::quoted(text) + " for " + format_defines(image.defines);
    std::int64_t value = 0;
    try {
      value = Expression::parse(text).evaluate(lookup);
    } catch (const Error& error) {
      throw Error(ErrorKind::invalid_argument, where + ": " + error.what());
    }
    if (value < 1 || value > 1024)
      throw Error(ErrorKind::invalid_argument,
                  where + ": " + std::to_string(value) + " threads; a block has 1 to 1024");
    sizes.push_back(static_cast<int>(value));
  }
  return sizes;
}

std::vector<Row> rows_for(const Image& image, const ArchLimits& limits,
                          const std::vector<std::string>& blocks, bool sass) {
  std::vector<apps::KernelInstructions> instructions;
  if (sass) instructions = apps::count_instructions(apps::disassemble(image.data));
  std::vector<Row> rows;
  for (const KernelResources& kernel : image_resources(image)) {
    std::optional<apps::KernelInstructions> counted;
    for (const apps::KernelInstructions& candidate : instructions)
      if (candidate.kernel == kernel.name) counted = candidate;
    for (int block : block_sizes(blocks, image, kernel))
      rows.push_back({image.defines, image.arch, kernel, block,
                      compute_occupancy(limits, kernel, block, 0), kernel.source, counted});
  }
  return rows;
}

std::vector<Row> measure(const ResourcesArguments& arguments) {
  const Program program = arguments.link.add_to(load_program(arguments.kernel));
  std::vector<Sweep> sweeps;
  for (const std::string& text : arguments.sweeps) sweeps.push_back(parse_sweep(text));
  const std::vector<std::vector<Define>> defines =
      configurations(parse_defines(arguments.defines), sweeps);
  // Every configuration names the same constants: the fixed ones and one value of each sweep.
  apps::check_declared(program, defines.front());
  const Target target = choose_target(arguments.arch, ImageFormat::cubin);
  if (!target.arch.starts_with("sm_"))
    throw Error(ErrorKind::invalid_argument,
                "resources are read from a CUBIN, which needs a real architecture (sm_XY), not " +
                    target.arch);
  auto [major, minor] = compute_capability_of(target.arch);
  const ArchLimits& limits = arch_limits(major, minor);

  std::vector<std::vector<Row>> per_configuration(defines.size());
  run_parallel(defines.size(), default_compile_threads(), [&](std::size_t index) {
    CompileOptions options;
    options.defines = defines[index];
    arguments.nvrtc.apply_to(options);
    arguments.link.apply_to(options);
    options.target = target;
    options.resource_usage = true;
    per_configuration[index] =
        rows_for(compile(program, options), limits, arguments.blocks, arguments.sass);
  });
  std::vector<Row> rows;
  for (std::vector<Row>& some : per_configuration)
    rows.insert(rows.end(), std::make_move_iterator(some.begin()),
                std::make_move_iterator(some.end()));
  return rows;
}

nlohmann::json optional_bytes(const std::optional<std::size_t>& bytes) {
  return bytes ? nlohmann::json(*bytes) : nlohmann::json(nullptr);
}

nlohmann::json instructions_json(const apps::KernelInstructions& instructions) {
  nlohmann::json counts{{"instructions", instructions.total}};
  for (const std::string& name : apps::instruction_classes())
    counts[name] = instructions.count(name);
  return counts;
}

nlohmann::json to_json(const Row& row) {
  nlohmann::json defines = nlohmann::json::object();
  for (const Define& define : row.defines) defines[define.name] = define.value;
  const KernelResources& kernel = row.kernel;
  const std::string name = demangle(kernel.name);
  const nlohmann::json mangled_name =
      name == kernel.name ? nlohmann::json() : nlohmann::json(kernel.name);
  return {{"defines", defines},
          {"arch", row.arch},
          {"kernel", name},
          {"mangled_name", mangled_name},
          {"registers", kernel.registers},
          {"static_smem_bytes", kernel.static_shared_bytes},
          {"constant_bytes", kernel.user_constant_bytes},
          {"local_bytes", kernel.stack_frame_bytes},
          {"stack_bytes", kernel.cumulative_stack_bytes},
          {"spill_store_bytes", optional_bytes(kernel.spill_store_bytes)},
          {"spill_load_bytes", optional_bytes(kernel.spill_load_bytes)},
          {"barriers", kernel.barriers},
          {"max_threads_per_block", kernel.max_threads_per_block},
          {"block_threads", row.block_threads},
          {"active_blocks_per_sm", row.occupancy.active_blocks_per_sm},
          {"active_warps_per_sm", row.occupancy.active_warps_per_sm},
          {"occupancy_percent", row.occupancy.fraction * 100.0},
          {"limit", to_string(row.occupancy.limit)},
          {"reason", row.occupancy.reason}};
}

// to_json, and the fields a linked program (file) and --sass (sass) add.
nlohmann::json to_json_with_extras(const Row& row) {
  nlohmann::json object = to_json(row);
  if (!row.file.empty()) object["file"] = row.file;
  if (row.instructions) object["sass"] = instructions_json(*row.instructions);
  return object;
}

std::string optional_text(const std::optional<std::size_t>& bytes) {
  return bytes ? std::to_string(*bytes) : "?";
}

std::vector<std::string> cells(const Row& row) {
  const KernelResources& kernel = row.kernel;
  return {format_defines(row.defines),
          demangle(kernel.name),
          std::to_string(kernel.registers),
          std::to_string(kernel.static_shared_bytes),
          std::to_string(kernel.user_constant_bytes),
          std::to_string(kernel.stack_frame_bytes),
          optional_text(kernel.spill_store_bytes) + "/" + optional_text(kernel.spill_load_bytes),
          std::to_string(kernel.barriers),
          kernel.max_threads_per_block ? std::to_string(kernel.max_threads_per_block) : "-",
          std::to_string(row.block_threads),
          std::to_string(row.occupancy.active_blocks_per_sm),
          std::to_string(row.occupancy.active_warps_per_sm),
          fixed(row.occupancy.fraction * 100.0, 1) + "%",
          std::string(to_string(row.occupancy.limit))};
}

// The columns --sass and a linked program add after the resources.
std::vector<std::string> extra_header(const std::vector<Row>& rows) {
  std::vector<std::string> header;
  if (std::any_of(rows.begin(), rows.end(), [](const Row& row) { return !row.file.empty(); }))
    header.push_back("file");
  if (rows.front().instructions) {
    header.push_back("instr");
    for (const std::string& name : apps::instruction_classes()) header.push_back(name);
  }
  return header;
}

std::vector<std::string> extra_cells(const Row& row, bool with_file) {
  std::vector<std::string> cells;
  if (with_file) cells.push_back(row.file.empty() ? "-" : row.file);
  if (row.instructions) {
    cells.push_back(std::to_string(row.instructions->total));
    for (const std::string& name : apps::instruction_classes())
      cells.push_back(std::to_string(row.instructions->count(name)));
  }
  return cells;
}

void print_rows(const std::vector<Row>& rows) {
  if (rows.empty()) {
    std::cout << "no kernels in the compiled CUBIN\n";
    return;
  }
  std::vector<std::string> header{"defines",   "kernel",   "regs",      "smem",    "const",
                                  "local",     "spill",    "bars",      "max thr", "block",
                                  "blocks/SM", "warps/SM", "occupancy", "limit"};
  const std::vector<std::string> extra = extra_header(rows);
  const bool with_file = !extra.empty() && extra.front() == "file";
  header.insert(header.end(), extra.begin(), extra.end());
  std::vector<std::vector<std::string>> table;
  for (const Row& row : rows) {
    table.push_back(cells(row));
    for (std::string& cell : extra_cells(row, with_file)) table.back().push_back(std::move(cell));
  }
  std::cout << "arch " << rows.front().arch << "; bytes per block (smem), module (const), thread "
            << "(local, spill stores/loads)\n";
  print_table(std::cout, header, table);
  for (const Row& row : rows)
    if (!row.occupancy.reason.empty())
      std::cout << demangle(row.kernel.name) << " [" << format_defines(row.defines) << "] block "
                << row.block_threads << ": " << row.occupancy.reason << '\n';
}

void run_resources(const ResourcesArguments& arguments) {
  const std::vector<Row> rows = measure(arguments);
  if (!arguments.json) {
    print_rows(rows);
    return;
  }
  nlohmann::json listed = nlohmann::json::array();
  for (const Row& row : rows) listed.push_back(to_json_with_extras(row));
  print_json(std::cout, listed);
}

}  // namespace

void add_resources_commands(CLI::App& app) {
  auto arguments = std::make_shared<ResourcesArguments>();
  CLI::App* command = app.add_subcommand(
      "resources",
      "Registers, shared/constant/local memory, spills and barriers of each kernel, and its "
      "occupancy per block size, for every configuration of the sweeps (no GPU needed)");
  add_kernel_argument(*command, arguments->kernel);
  add_link_arguments(*command, arguments->link);
  add_define_option(*command, arguments->defines);
  command->add_option("--sweep", arguments->sweeps,
                      "NAME=v1,v2,...: compile once per value; several --sweep give their "
                      "cartesian product; repeatable");
  add_nvrtc_arguments(*command, arguments->nvrtc);
  add_arch_option(*command, arguments->arch);
  command->add_option("--block", arguments->blocks,
                      "threads per block for the occupancy: N[,M...], each a number or an "
                      "expression of the defines that follows a sweep (TILE_WIDTH*TILE_WIDTH); "
                      "default: each kernel's __launch_bounds__, else 256");
  command->add_flag("--json", arguments->json, "print JSON (fields below)");
  command->add_flag("--sass", arguments->sass,
                    "add each kernel's instruction counts by class (FFMA, loads and stores by "
                    "memory space, barriers, branches), read from its machine code through the "
                    "toolkit's nvdisasm or cuobjdump");
  command->footer(json_fields);
  command->callback([arguments] {
    // NVRTC answers a repeated compile from the CUDA compute cache without ptxas' report, and
    // the report is this command's point. Set before any thread starts; never overrides the user.
    setenv("CUDA_CACHE_DISABLE", "1", 0);
    run_resources(*arguments);
  });
}

}  // namespace ptxrt::cli
