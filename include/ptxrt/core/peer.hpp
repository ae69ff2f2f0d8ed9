// Peer access between devices: kernels on one device reading and writing another's memory
// directly, and device-to-device copies between them without a trip through host memory.
//
// Copies between devices work without it: DeviceRange::copy_from copies across contexts with
// cuMemcpyPeerAsync, which the driver stages through host memory when peer access is not enabled
// (said at debug level). Thread safety: every function may be called from any thread; enabling
// is idempotent.
#pragma once

#include "ptxrt/core/context.hpp"
#include "ptxrt/core/device.hpp"
#include "ptxrt/export.hpp"

namespace ptxrt {

// Whether `device` can access `peer`'s memory directly (an NVLink or PCIe peer-to-peer path;
// cuDeviceCanAccessPeer). A device is not its own peer: false, without asking the driver.
PTXRT_API bool can_access_peer(const Device& device, const Device& peer);

// Lets kernels and copies in `context` access memory allocated in `peer` directly
// (cuCtxEnablePeerAccess; one direction: call it both ways for both). Asking again does nothing.
// Error(invalid_argument) when both contexts are on one device, or when the devices have no
// direct path, naming them and what still works.
PTXRT_API void enable_peer_access(const Context& context, const Context& peer);

// True once enable_peer_access(context, peer) succeeded in this process.
PTXRT_API bool peer_access_enabled(const Context& context, const Context& peer);

}  // namespace ptxrt
