#include "ptxrt/core/graph.hpp"

#include <algorithm>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "driver/driver_api.hpp"
#include "driver/graph_owner.hpp"
#include "driver/launch_attributes.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/stream.hpp"

namespace ptxrt {
namespace {

GraphNodeType node_type(CUgraphNode node) {
  CUgraphNodeType type{};
  check(detail::driver().cuGraphNodeGetType(node, &type), "cuGraphNodeGetType");
  switch (type) {
    case CU_GRAPH_NODE_TYPE_KERNEL:
      return GraphNodeType::kernel;
    case CU_GRAPH_NODE_TYPE_MEMCPY:
      return GraphNodeType::memcpy;
    case CU_GRAPH_NODE_TYPE_MEMSET:
      return GraphNodeType::memset;
    default:
      return GraphNodeType::other;
  }
}

std::vector<CUgraphNode> handles(const std::vector<GraphNode>& nodes) {
  std::vector<CUgraphNode> result;
  result.reserve(nodes.size());
  for (const GraphNode& node : nodes) result.push_back(node.handle());
  return result;
}

// The shape cuGraphExecUpdate needs unchanged: node types in order, and the edges between
// positions with their kind (a programmatic edge is not a full dependency).
struct Topology {
  std::vector<GraphNodeType> types;
  std::vector<std::tuple<std::size_t, std::size_t, unsigned char>> edges;  // sorted
};

Topology topology_of(CUgraph graph) {
  const std::vector<CUgraphNode> nodes = detail::graph_nodes(graph);
  Topology topology;
  std::unordered_map<CUgraphNode, std::size_t> position;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    topology.types.push_back(node_type(nodes[i]));
    position.emplace(nodes[i], i);
  }
  const detail::DriverApi& api = detail::driver();
  std::size_t count = 0;
  check(api.cuGraphGetEdges(graph, nullptr, nullptr, nullptr, &count), "cuGraphGetEdges");
  std::vector<CUgraphNode> from(count), to(count);
  std::vector<CUgraphEdgeData> kinds(count);
  if (count > 0)
    check(api.cuGraphGetEdges(graph, from.data(), to.data(), kinds.data(), &count),
          "cuGraphGetEdges");
  for (std::size_t i = 0; i < count; ++i)
    topology.edges.emplace_back(position.at(from[i]), position.at(to[i]), kinds[i].type);
  std::sort(topology.edges.begin(), topology.edges.end());
  return topology;
}

// Whether `replacement` can update an executable graph of `current`'s topology, and if not why.
Verdict same_topology(const Topology& current, const Topology& replacement) {
  const std::string changed = ": the topology changed";
  if (current.types.size() != replacement.types.size())
    return Verdict::refused("the new graph has " + std::to_string(replacement.types.size()) +
                            " nodes, the executable graph " + std::to_string(current.types.size()) +
                            changed);
  for (std::size_t i = 0; i < current.types.size(); ++i)
    if (current.types[i] != replacement.types[i])
      return Verdict::refused(
          "node " + std::to_string(i) + " is a " + std::string(to_string(replacement.types[i])) +
          " node in the new graph and a " + std::string(to_string(current.types[i])) +
          " node in the executable graph" + changed);
  if (current.edges != replacement.edges)
    return Verdict::refused(
        "the new graph has " + std::to_string(replacement.edges.size()) +
        " dependencies, the executable graph " + std::to_string(current.edges.size()) +
        (current.edges.size() == replacement.edges.size() ? ", between other nodes" : "") +
        changed);
  return {};
}

std::string_view update_result_text(CUgraphExecUpdateResult result) {
  switch (result) {
    case CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED:
      return "the topology changed";
    case CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED:
      return "a node's type changed";
    case CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED:
    case CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE:
      return "a kernel node's function changed in a way the driver cannot update (another "
             "context, or another kind of kernel)";
    case CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED:
      return "a node's parameters changed in a way the driver cannot update (a memset's "
             "element size or a copy's kind of memory, a node of another context)";
    case CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED:
      return "a node of a kind the driver cannot update";
    case CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED:
      return "a kernel node's launch attributes changed in a way the driver cannot update";
    default:
      return "the driver refused without a reason";
  }
}

// The driver copies the argument values out of `parameters` when it takes the node.
CUDA_KERNEL_NODE_PARAMS kernel_node(const Kernel& kernel, const LaunchConfig& config,
                                    void** parameters) {
  CUDA_KERNEL_NODE_PARAMS node{};
  node.func = kernel.handle();
  detail::set_geometry(node, config);
  node.kernelParams = parameters;
  return node;
}

CUDA_MEMCPY3D linear_copy(std::size_t bytes) {
  CUDA_MEMCPY3D copy{};
  copy.WidthInBytes = bytes;
  copy.Height = 1;
  copy.Depth = 1;
  return copy;
}

}  // namespace

namespace detail {

std::vector<CUgraphNode> graph_nodes(CUgraph graph) {
  std::size_t count = 0;
  check(driver().cuGraphGetNodes(graph, nullptr, &count), "cuGraphGetNodes");
  std::vector<CUgraphNode> nodes(count);
  if (count > 0) check(driver().cuGraphGetNodes(graph, nodes.data(), &count), "cuGraphGetNodes");
  return nodes;
}

GraphOwner::~GraphOwner() {
  if (graph) driver().cuGraphDestroy(graph);
}

}  // namespace detail

std::string_view to_string(GraphNodeType type) {
  switch (type) {
    case GraphNodeType::kernel:
      return "kernel";
    case GraphNodeType::memcpy:
      return "memcpy";
    case GraphNodeType::memset:
      return "memset";
    case GraphNodeType::other:
      return "other";
  }
  return "other";
}

GraphNodeType GraphNode::type() const { return node_type(node_); }

Graph::Graph() : owner_(std::make_shared<detail::GraphOwner>()) {
  check(detail::driver().cuGraphCreate(&owner_->graph, 0), "cuGraphCreate");
}

Graph::~Graph() = default;
Graph::Graph(Graph&&) noexcept = default;
Graph& Graph::operator=(Graph&&) noexcept = default;

CUgraph Graph::handle() const noexcept { return owner_->graph; }

GraphNode Graph::add_kernel_raw(const Kernel& kernel, const LaunchConfig& config,
                                const std::vector<GraphNode>& dependencies,
                                const ArgumentSignature& signature, void** parameters) {
  if (config.programmatic_serialization)
    detail::invalid_launch(kernel.describe(),
                           "programmatic stream serialization is an attribute of stream "
                           "launches, not of graph kernel nodes: capture the launch instead");
  kernel.prepare_launch(config, signature);
  const CUDA_KERNEL_NODE_PARAMS node_parameters = kernel_node(kernel, config, parameters);
  const std::vector<CUgraphNode> after = handles(dependencies);
  const detail::DriverApi& api = detail::driver();
  ContextGuard guard(kernel.context());
  CUgraphNode node = nullptr;
  check(
      api.cuGraphAddKernelNode(&node, owner_->graph, after.data(), after.size(), &node_parameters),
      "cuGraphAddKernelNode",
      "adding " + kernel.describe() + " with " + detail::describe_launch(config) + " to a graph");
  const detail::LaunchAttributeList attributes =
      detail::launch_attribute_list(config, kernel.compiled_cluster());
  for (unsigned i = 0; i < attributes.count; ++i)
    check(api.cuGraphKernelNodeSetAttribute(node, attributes.entries[i].id,
                                            &attributes.entries[i].value),
          "cuGraphKernelNodeSetAttribute",
          "setting the launch attributes of " + kernel.describe() + "'s graph node (" +
              detail::describe_launch(config) + ")");
  owner_->kernels.push_back(kernel);
  owner_->adopt(kernel.context());
  return GraphNode(node);
}

GraphNode Graph::add_memset(const DeviceRange& memory, std::uint32_t value, unsigned element_bytes,
                            const std::vector<GraphNode>& dependencies) {
  if (memory.bytes() % element_bytes != 0)
    throw Error(ErrorKind::invalid_argument, "a memset node of " + std::to_string(element_bytes) +
                                                 "-byte elements needs a size that is a "
                                                 "multiple of " +
                                                 std::to_string(element_bytes) + ", got " +
                                                 std::to_string(memory.bytes()) + " bytes");
  CUDA_MEMSET_NODE_PARAMS memset{};
  memset.dst = memory.address();
  memset.value = value;
  memset.elementSize = element_bytes;
  memset.width = memory.bytes() / element_bytes;
  memset.height = 1;
  const std::vector<CUgraphNode> after = handles(dependencies);
  ContextGuard guard(memory.context());
  CUgraphNode node = nullptr;
  check(detail::driver().cuGraphAddMemsetNode(&node, owner_->graph, after.data(), after.size(),
                                              &memset, memory.context().handle()),
        "cuGraphAddMemsetNode",
        "adding a memset of " + std::to_string(memory.bytes()) + " bytes to a graph");
  owner_->adopt(memory.context());
  return GraphNode(node);
}

GraphNode Graph::add_fill_bytes(const DeviceRange& memory, std::uint8_t value,
                                const std::vector<GraphNode>& dependencies) {
  return add_memset(memory, value, 1, dependencies);
}

GraphNode Graph::add_fill_words(const DeviceRange& memory, std::uint32_t word,
                                const std::vector<GraphNode>& dependencies) {
  return add_memset(memory, word, 4, dependencies);
}

GraphNode Graph::add_memcpy(const CUDA_MEMCPY3D& copy, const Context& context, std::size_t bytes,
                            const std::vector<GraphNode>& dependencies) {
  const std::vector<CUgraphNode> after = handles(dependencies);
  ContextGuard guard(context);
  CUgraphNode node = nullptr;
  check(detail::driver().cuGraphAddMemcpyNode(&node, owner_->graph, after.data(), after.size(),
                                              &copy, context.handle()),
        "cuGraphAddMemcpyNode", "adding a copy of " + std::to_string(bytes) + " bytes to a graph");
  owner_->adopt(context);
  return GraphNode(node);
}

GraphNode Graph::add_copy(const DeviceRange& destination, const DeviceRange& source,
                          std::size_t bytes, const std::vector<GraphNode>& dependencies) {
  if (!(destination.context() == source.context()))
    throw Error(ErrorKind::invalid_argument,
                "a graph's copy node copies within one context; for device " +
                    std::to_string(source.context().device().ordinal()) + " to device " +
                    std::to_string(destination.context().device().ordinal()) +
                    ", capture DeviceRange::copy_from on a stream instead");
  if (bytes > destination.bytes() || bytes > source.bytes())
    throw Error(ErrorKind::invalid_argument,
                "a graph's copy of " + std::to_string(bytes) + " bytes does not fit (source " +
                    std::to_string(source.bytes()) + " bytes, destination " +
                    std::to_string(destination.bytes()) + " bytes)");
  CUDA_MEMCPY3D copy = linear_copy(bytes);
  copy.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.srcDevice = source.address();
  copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.dstDevice = destination.address();
  return add_memcpy(copy, destination.context(), bytes, dependencies);
}

GraphNode Graph::add_upload(const DeviceRange& destination, const void* source, std::size_t bytes,
                            const std::vector<GraphNode>& dependencies) {
  if (bytes > destination.bytes())
    throw Error(ErrorKind::invalid_argument, "a graph's upload of " + std::to_string(bytes) +
                                                 " bytes does not fit a device buffer of " +
                                                 std::to_string(destination.bytes()) + " bytes");
  CUDA_MEMCPY3D copy = linear_copy(bytes);
  copy.srcMemoryType = CU_MEMORYTYPE_HOST;
  copy.srcHost = source;
  copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.dstDevice = destination.address();
  return add_memcpy(copy, destination.context(), bytes, dependencies);
}

GraphNode Graph::add_download(void* destination, const DeviceRange& source, std::size_t bytes,
                              const std::vector<GraphNode>& dependencies) {
  if (bytes > source.bytes())
    throw Error(ErrorKind::invalid_argument, "a graph's download of " + std::to_string(bytes) +
                                                 " bytes does not fit a device buffer of " +
                                                 std::to_string(source.bytes()) + " bytes");
  CUDA_MEMCPY3D copy = linear_copy(bytes);
  copy.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.srcDevice = source.address();
  copy.dstMemoryType = CU_MEMORYTYPE_HOST;
  copy.dstHost = destination;
  return add_memcpy(copy, source.context(), bytes, dependencies);
}

std::vector<GraphNode> Graph::nodes() const {
  std::vector<GraphNode> result;
  for (CUgraphNode node : detail::graph_nodes(owner_->graph)) result.push_back(GraphNode(node));
  return result;
}

std::vector<GraphNode> Graph::nodes(GraphNodeType type) const {
  std::vector<GraphNode> result;
  for (CUgraphNode node : detail::graph_nodes(owner_->graph))
    if (node_type(node) == type) result.push_back(GraphNode(node));
  return result;
}

GraphExec Graph::instantiate() const {
  std::optional<ContextGuard> guard;
  if (owner_->home) guard.emplace(*owner_->home);
  CUgraphExec exec = nullptr;
  check(detail::driver().cuGraphInstantiateWithFlags(&exec, owner_->graph, 0),
        "cuGraphInstantiateWithFlags",
        "instantiating a graph of " + std::to_string(detail::graph_nodes(owner_->graph).size()) +
            " nodes");
  std::vector<CUgraphNode> kernel_nodes = handles(nodes(GraphNodeType::kernel));
  std::sort(kernel_nodes.begin(), kernel_nodes.end());
  return GraphExec(owner_, exec, std::move(kernel_nodes));
}

GraphExec::~GraphExec() { release(); }

GraphExec::GraphExec(GraphExec&& other) noexcept
    : graph_(std::move(other.graph_)),
      exec_(std::exchange(other.exec_, nullptr)),
      kernel_nodes_(std::move(other.kernel_nodes_)) {}

GraphExec& GraphExec::operator=(GraphExec&& other) noexcept {
  if (this != &other) {
    release();
    graph_ = std::move(other.graph_);
    exec_ = std::exchange(other.exec_, nullptr);
    kernel_nodes_ = std::move(other.kernel_nodes_);
  }
  return *this;
}

void GraphExec::release() noexcept {
  if (exec_) detail::driver().cuGraphExecDestroy(std::exchange(exec_, nullptr));
}

void GraphExec::launch(const Stream& stream) const {
  ContextGuard guard(stream.context());
  check(detail::driver().cuGraphLaunch(exec_, stream.handle()), "cuGraphLaunch",
        "replaying a graph on a stream of device " +
            std::to_string(stream.context().device().ordinal()));
}

void GraphExec::set_kernel_arguments_raw(GraphNode node, const Kernel& kernel,
                                         const LaunchConfig& config,
                                         const ArgumentSignature& signature, void** parameters) {
  if (!std::binary_search(kernel_nodes_.begin(), kernel_nodes_.end(), node.handle()))
    detail::invalid_launch(kernel.describe(),
                           "set_kernel_arguments needs a kernel node of the graph this executable "
                           "graph was instantiated from");
  kernel.prepare_launch(config, signature);
  const CUDA_KERNEL_NODE_PARAMS node_parameters = kernel_node(kernel, config, parameters);
  ContextGuard guard(kernel.context());
  check(detail::driver().cuGraphExecKernelNodeSetParams(exec_, node.handle(), &node_parameters),
        "cuGraphExecKernelNodeSetParams",
        "setting the arguments of " + kernel.describe() + "'s node (" +
            detail::describe_launch(config) + ")");
}

Verdict GraphExec::update(const Graph& graph) {
  if (Verdict same = same_topology(topology_of(graph_->graph), topology_of(graph.handle())); !same)
    return same;
  std::optional<ContextGuard> guard;
  if (graph_->home) guard.emplace(*graph_->home);
  CUgraphExecUpdateResultInfo info{};
  const CUresult result = detail::driver().cuGraphExecUpdate(exec_, graph.handle(), &info);
  if (result == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE) {
    const std::vector<CUgraphNode> nodes = detail::graph_nodes(graph.handle());
    const auto at = std::find(nodes.begin(), nodes.end(), info.errorNode);
    const std::string where =
        at == nodes.end() ? "" : " (node " + std::to_string(at - nodes.begin()) + ")";
    return Verdict::refused(std::string(update_result_text(info.result)) + where);
  }
  check(result, "cuGraphExecUpdate", "updating an executable graph from a new one");
  return {};
}

}  // namespace ptxrt
