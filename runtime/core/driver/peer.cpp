#include "ptxrt/core/peer.hpp"

#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "driver/driver_api.hpp"
#include "ptxrt/core/error.hpp"

namespace ptxrt {
namespace {

// The (context, peer) pairs enabled through ptxrt. The driver has no query for it, and enabling
// twice is an error ptxrt must not provoke: a failing call under compute-sanitizer is a defect.
struct EnabledPairs {
  std::mutex mutex;
  std::set<std::pair<CUcontext, CUcontext>> pairs;
};

EnabledPairs& enabled_pairs() {
  static EnabledPairs enabled;
  return enabled;
}

std::string device_name(const Device& device) {
  return "device " + std::to_string(device.ordinal());
}

}  // namespace

bool can_access_peer(const Device& device, const Device& peer) {
  if (device.ordinal() == peer.ordinal()) return false;
  int can_access = 0;
  check(detail::driver().cuDeviceCanAccessPeer(&can_access, device.handle(), peer.handle()),
        "cuDeviceCanAccessPeer",
        "asking whether " + device_name(device) + " can access " + device_name(peer));
  return can_access != 0;
}

void enable_peer_access(const Context& context, const Context& peer) {
  const Device& device = context.device();
  const Device& other = peer.device();
  if (device.ordinal() == other.ordinal())
    throw Error(ErrorKind::invalid_argument,
                "peer access is between two devices, and both contexts are on " +
                    device_name(device) + ": its own memory needs none");
  if (!can_access_peer(device, other))
    throw Error(ErrorKind::invalid_argument,
                device_name(device) + " cannot access " + device_name(other) +
                    "'s memory directly (cuDeviceCanAccessPeer = 0: no NVLink or PCIe "
                    "peer-to-peer path between them); copies between them still work, staged "
                    "through host memory by the driver");
  EnabledPairs& enabled = enabled_pairs();
  std::lock_guard lock(enabled.mutex);
  if (enabled.pairs.contains({context.handle(), peer.handle()})) return;
  ContextGuard guard(context);
  const CUresult result = detail::driver().cuCtxEnablePeerAccess(peer.handle(), 0);
  // The application may have enabled it itself, outside ptxrt.
  if (result != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
    check(result, "cuCtxEnablePeerAccess",
          "letting " + device_name(device) + " access " + device_name(other) + "'s memory");
  enabled.pairs.insert({context.handle(), peer.handle()});
}

bool peer_access_enabled(const Context& context, const Context& peer) {
  EnabledPairs& enabled = enabled_pairs();
  std::lock_guard lock(enabled.mutex);
  return enabled.pairs.contains({context.handle(), peer.handle()});
}

}  // namespace ptxrt
