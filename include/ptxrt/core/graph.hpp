// CUDA graphs: work recorded once — captured from a Stream (Stream::begin_capture/end_capture) or
// built node by node — instantiated into an executable graph and replayed on any stream for a
// fraction of the cost of launching its kernels one by one.
//
// A kernel node is checked as a launch is (Kernel::prepare_launch: geometry, arguments, launch
// attributes and residency) before the driver sees it; memset and memcpy nodes check their byte
// ranges. An executable graph takes new kernel arguments for a node, or a whole re-captured graph
// of the same topology (update), without instantiating again; when the driver cannot update,
// update says why and the caller instantiates anew.
//
// Ownership: a Graph owns its CUgraph, a GraphExec its CUgraphExec and a share of the graph it
// was made from (its nodes name the executable graph's nodes). A graph keeps the Kernels of its
// kernel nodes built here; the modules of captured launches, and the host memory of upload and
// download nodes, must outlive every replay.
//
// Thread safety: like a Stream, a Graph or GraphExec belongs to one thread at a time (the driver
// does not synchronize them). Replays of one GraphExec run one after another, even on different
// streams.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ptxrt/core/context.hpp"
#include "ptxrt/core/kernel.hpp"
#include "ptxrt/core/memory.hpp"
#include "ptxrt/core/verdict.hpp"
#include "ptxrt/export.hpp"

namespace ptxrt {

class Stream;
class GraphExec;

namespace detail {
struct GraphOwner;
}

enum class GraphNodeType { kernel, memcpy, memset, other };
PTXRT_API std::string_view to_string(GraphNodeType type);

// A node of a graph: valid while the graph, or an executable graph made from it, exists.
class PTXRT_API GraphNode {
 public:
  CUgraphNode handle() const noexcept { return node_; }
  GraphNodeType type() const;
  friend bool operator==(const GraphNode&, const GraphNode&) = default;

 private:
  friend class Graph;
  friend class GraphExec;
  explicit GraphNode(CUgraphNode node) : node_(node) {}
  CUgraphNode node_ = nullptr;
};

class PTXRT_API Graph {
 public:
  // An empty graph (cuGraphCreate).
  Graph();
  ~Graph();
  Graph(Graph&&) noexcept;
  Graph& operator=(Graph&&) noexcept;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // A kernel node running after `dependencies`: launched as kernel.launch(config, args...)
  // would be (config.stream is ignored; programmatic stream serialization is a stream launch's
  // attribute and refused here).
  template <typename... Args>
  GraphNode add_kernel(const Kernel& kernel, const LaunchConfig& config,
                       const std::vector<GraphNode>& dependencies, const Args&... args) {
    return detail::with_kernel_parameters(
        [&](const ArgumentSignature& signature, void** parameters) {
          return add_kernel_raw(kernel, config, dependencies, signature, parameters);
        },
        args...);
  }
  // Memset nodes: every byte, or every 32-bit word, of `memory`.
  GraphNode add_fill_bytes(const DeviceRange& memory, std::uint8_t value,
                           const std::vector<GraphNode>& dependencies = {});
  GraphNode add_fill_words(const DeviceRange& memory, std::uint32_t word,
                           const std::vector<GraphNode>& dependencies = {});
  // Memcpy nodes of `bytes`: device to device (one context), host to device and device to host.
  // Host memory is read or written at every replay: keep it alive, and pinned for speed.
  GraphNode add_copy(const DeviceRange& destination, const DeviceRange& source, std::size_t bytes,
                     const std::vector<GraphNode>& dependencies = {});
  GraphNode add_upload(const DeviceRange& destination, const void* source, std::size_t bytes,
                       const std::vector<GraphNode>& dependencies = {});
  GraphNode add_download(void* destination, const DeviceRange& source, std::size_t bytes,
                         const std::vector<GraphNode>& dependencies = {});

  // Every node, in the order they were added or captured; of one type.
  std::vector<GraphNode> nodes() const;
  std::vector<GraphNode> nodes(GraphNodeType type) const;

  GraphExec instantiate() const;  // cuGraphInstantiateWithFlags
  CUgraph handle() const noexcept;

 private:
  friend class Stream;
  friend class GraphExec;
  explicit Graph(std::shared_ptr<detail::GraphOwner> owner) : owner_(std::move(owner)) {}
  GraphNode add_kernel_raw(const Kernel& kernel, const LaunchConfig& config,
                           const std::vector<GraphNode>& dependencies,
                           const ArgumentSignature& signature, void** parameters);
  GraphNode add_memset(const DeviceRange& memory, std::uint32_t value, unsigned element_bytes,
                       const std::vector<GraphNode>& dependencies);
  GraphNode add_memcpy(const CUDA_MEMCPY3D& copy, const Context& context, std::size_t bytes,
                       const std::vector<GraphNode>& dependencies);
  std::shared_ptr<detail::GraphOwner> owner_;
};

class PTXRT_API GraphExec {
 public:
  ~GraphExec();
  GraphExec(GraphExec&&) noexcept;
  GraphExec& operator=(GraphExec&&) noexcept;
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;

  // Replays every node on `stream` (cuGraphLaunch), after the work enqueued there so far.
  void launch(const Stream& stream) const;

  // New arguments (and grid, block, shared memory) for kernel node `node` of the graph this was
  // instantiated from, checked as a launch of `kernel` is; the node's launch attributes stay as
  // they were. Error(invalid_argument) for a node that is not one of its kernel nodes.
  template <typename... Args>
  void set_kernel_arguments(GraphNode node, const Kernel& kernel, const LaunchConfig& config,
                            const Args&... args) {
    detail::with_kernel_parameters(
        [&](const ArgumentSignature& signature, void** parameters) {
          set_kernel_arguments_raw(node, kernel, config, signature, parameters);
        },
        args...);
  }

  // Takes every node's parameters from `graph` (typically the same work captured again with new
  // arguments) without instantiating again (cuGraphExecUpdate). Refused, with the reason, when
  // the topology differs (node count, node types, edges: checked here first) or the driver
  // cannot update a node; the executable graph is unchanged then. The verdict is yes when the
  // update was applied, else says why not ("the new graph has 99 nodes, the executable graph
  // 100: the topology changed").
  Verdict update(const Graph& graph);

  CUgraphExec handle() const noexcept { return exec_; }

 private:
  friend class Graph;
  GraphExec(std::shared_ptr<detail::GraphOwner> graph, CUgraphExec exec,
            std::vector<CUgraphNode> kernel_nodes)
      : graph_(std::move(graph)), exec_(exec), kernel_nodes_(std::move(kernel_nodes)) {}
  void set_kernel_arguments_raw(GraphNode node, const Kernel& kernel, const LaunchConfig& config,
                                const ArgumentSignature& signature, void** parameters);
  void release() noexcept;
  std::shared_ptr<detail::GraphOwner> graph_;  // the graph instantiated: its nodes name ours
  CUgraphExec exec_ = nullptr;
  std::vector<CUgraphNode> kernel_nodes_;  // of the graph as instantiated, sorted
};

}  // namespace ptxrt
