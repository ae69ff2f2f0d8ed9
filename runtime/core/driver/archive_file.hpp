// Internal: the reader of System V (GNU) ar archives, the static libraries nvcc -lib and ar write.
// As ElfFile does for ELF, the constructor checks the whole container before anything is read
// through it: every member header (its terminator, a decimal size, the member inside the
// archive), the long-name table and every reference into it, and the symbol table (its count, and
// each offset at a member's header). A defect throws Error(invalid_argument) naming the member
// or offset and what is wrong. The members' contents are the caller's to check. Views into the
// bytes it was given, which must outlive it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ptxrt::detail {

struct ArchiveMember {
  std::string name;  // as ar lists it: "bar.o"
  std::uint64_t header_offset = 0;
  std::string_view contents;
};

class ArchiveFile {
 public:
  explicit ArchiveFile(std::string_view bytes);

  // The members that hold files, in archive order; the symbol and long-name tables are not among
  // them.
  const std::vector<ArchiveMember>& members() const { return members_; }

 private:
  struct SymbolTable {
    std::string_view contents;
    std::size_t entry_bytes;  // 4 in "/", 8 in "/SYM64/"
  };

  // Reads the member whose header is at `header_offset`; where the next one starts.
  std::uint64_t read_member(std::uint64_t header_offset);
  std::string member_name(std::string_view field, std::uint64_t header_offset) const;
  void check_symbol_table(const SymbolTable& table) const;

  std::string_view bytes_;
  std::string_view long_names_;
  std::vector<SymbolTable> symbol_tables_;
  std::vector<ArchiveMember> members_;
};

// Whether `bytes` start with the archive magic "!<arch>\n".
bool looks_like_archive(std::string_view bytes);

}  // namespace ptxrt::detail
