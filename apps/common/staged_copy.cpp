#include "apps/common/staged_copy.hpp"

#include <algorithm>
#include <cstring>

namespace ptxrt::apps {

bool page_locked(const Context& context, std::span<const std::byte> bytes) {
  return bytes.empty() ||
         (is_page_locked(context, bytes.data()) && is_page_locked(context, &bytes.back()));
}

StagedCopier::StagedCopier(const Context& context, std::size_t chunk_bytes)
    : context_(context), chunk_bytes_(chunk_bytes) {}

void StagedCopier::allocate_staging() {
  if (!staging_.empty()) return;
  for (int buffer = 0; buffer < 2; ++buffer) {
    staging_.emplace_back(context_, chunk_bytes_);
    drained_.emplace_back(context_);
  }
}

void StagedCopier::upload(DeviceRange& destination, std::size_t offset,
                          std::span<const std::byte> source, const Stream& stream) {
  if (page_locked(context_, source)) {
    destination.upload_bytes_async(source.data(), source.size(), stream, offset);
    return;
  }
  allocate_staging();
  for (std::size_t done = 0, chunk = 0; done < source.size(); done += chunk_bytes_, ++chunk) {
    const std::size_t bytes = std::min(chunk_bytes_, source.size() - done);
    const std::size_t buffer = chunk % staging_.size();
    // The copy engine has read what this buffer held before.
    drained_[buffer].synchronize();
    std::memcpy(staging_[buffer].data(), source.data() + done, bytes);
    destination.upload_bytes_async(staging_[buffer].data(), bytes, stream, offset + done);
    drained_[buffer].record(stream);
  }
}

void StagedCopier::download(std::span<std::byte> destination, const DeviceRange& source,
                            std::size_t offset, const Stream& stream) {
  if (page_locked(context_, destination)) {
    source.download_bytes_async(destination.data(), destination.size(), stream, offset);
    return;
  }
  allocate_staging();
  const std::size_t chunks = (destination.size() + chunk_bytes_ - 1) / chunk_bytes_;
  auto chunk_bytes = [&](std::size_t chunk) {
    return std::min(chunk_bytes_, destination.size() - chunk * chunk_bytes_);
  };
  auto enqueue = [&](std::size_t chunk) {
    const std::size_t buffer = chunk % staging_.size();
    drained_[buffer].synchronize();  // no copy still reads or writes the buffer
    source.download_bytes_async(staging_[buffer].data(), chunk_bytes(chunk), stream,
                                offset + chunk * chunk_bytes_);
    drained_[buffer].record(stream);
  };
  if (chunks > 0) enqueue(0);
  for (std::size_t chunk = 0; chunk < chunks; ++chunk) {
    // The next chunk lands in the other buffer while this one is copied out.
    if (chunk + 1 < chunks) enqueue(chunk + 1);
    const std::size_t buffer = chunk % staging_.size();
    drained_[buffer].synchronize();
    std::memcpy(destination.data() + chunk * chunk_bytes_, staging_[buffer].data(),
                chunk_bytes(chunk));
  }
}

}  // namespace ptxrt::apps
