#include "ptxrt/core/symbol.hpp"

#include "driver/module_state.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/memory.hpp"

namespace ptxrt {

GlobalSymbol::GlobalSymbol(std::shared_ptr<const detail::ModuleState> module, CUdeviceptr address,
                           std::size_t bytes, std::string name)
    : module_(std::move(module)), address_(address), bytes_(bytes), name_(std::move(name)) {}

const Context& GlobalSymbol::context() const noexcept { return module_->context; }

void GlobalSymbol::check_size(std::size_t bytes, const char* direction) const {
  if (bytes != bytes_)
    throw Error(ErrorKind::invalid_argument,
                "symbol '" + name_ + "' of module " + module_->label + " is " +
                    std::to_string(bytes_) + " bytes, but " + std::to_string(bytes) +
                    " bytes were " + direction);
}

void GlobalSymbol::write(const void* source, std::size_t bytes) const {
  check_size(bytes, "given to write");
  detail::copy_to_device(module_->context, address_, source, bytes, std::nullopt,
                         "writing symbol '" + name_ + "' of " + module_->label);
}

void GlobalSymbol::read(void* destination, std::size_t bytes) const {
  check_size(bytes, "asked for");
  detail::copy_from_device(module_->context, destination, address_, bytes, std::nullopt,
                           "reading symbol '" + name_ + "' of " + module_->label);
}

void GlobalSymbol::write_async(const void* source, std::size_t bytes, StreamRef stream) const {
  check_size(bytes, "given to write");
  detail::copy_to_device(module_->context, address_, source, bytes, stream,
                         "writing symbol '" + name_ + "' of " + module_->label);
}

void GlobalSymbol::read_async(void* destination, std::size_t bytes, StreamRef stream) const {
  check_size(bytes, "asked for");
  detail::copy_from_device(module_->context, destination, address_, bytes, stream,
                           "reading symbol '" + name_ + "' of " + module_->label);
}

}  // namespace ptxrt
