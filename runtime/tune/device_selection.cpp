#include "ptxrt/tune/device_selection.hpp"

#include <algorithm>
#include <charconv>
#include <set>
#include <string>

#include "ptxrt/core/error.hpp"

namespace ptxrt {

namespace {

void require_distinct(const std::vector<int>& devices, std::string_view user) {
  std::set<int> seen;
  for (int device : devices)
    if (!seen.insert(device).second)
      throw Error(ErrorKind::invalid_argument,
                  std::string(user) + ": device " + std::to_string(device) + " is listed twice");
}

std::string describe(const DeviceProperties& device) {
  return "device " + std::to_string(device.ordinal) + " (" + device.name + ", " +
         device.compute_capability() + ")";
}

}  // namespace

std::vector<int> all_devices() {
  std::vector<int> devices(static_cast<std::size_t>(Device::count()));
  for (std::size_t i = 0; i < devices.size(); ++i) devices[i] = static_cast<int>(i);
  return devices;
}

std::vector<int> devices_or_all(std::vector<int> devices, std::string_view user) {
  if (devices.empty()) return all_devices();
  require_distinct(devices, user);
  return devices;
}

std::optional<std::vector<int>> parse_device_list(std::string_view text) {
  if (text == "all") return std::nullopt;
  const std::string quoted = "--devices '" + std::string(text) + "'";
  std::vector<int> devices;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, comma - start);
    int device = -1;
    const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), device);
    if (item.empty() || error != std::errc() || end != item.data() + item.size() || device < 0)
      throw Error(ErrorKind::invalid_argument,
                  quoted + ": '" + std::string(item) +
                      "' is not a device ordinal; expected 'all' or ordinals such as 0,1");
    devices.push_back(device);
    if (comma == text.size()) break;
    start = comma + 1;
  }
  require_distinct(devices, quoted);
  return devices;
}

void require_one_model(std::span<const DeviceProperties> devices) {
  for (const DeviceProperties& device : devices)
    if (device.name != devices.front().name || device.cc_major != devices.front().cc_major ||
        device.cc_minor != devices.front().cc_minor)
      throw Error(ErrorKind::invalid_argument, describe(device) + " is not the model of " +
                                                   describe(devices.front()) +
                                                   ": timings are comparable on one model only");
}

std::vector<DeviceProperties> one_model_devices(const std::optional<std::vector<int>>& listed) {
  std::vector<DeviceProperties> devices;
  for (int ordinal : listed ? *listed : all_devices())
    devices.push_back(Device::get(ordinal).properties());
  require_one_model(devices);
  return devices;
}

}  // namespace ptxrt
