// The check every piece of device code from outside passes before nvJitLink or the driver reads
// it (check_device_code): each rule with a crafted input, built here from what NVRTC and
// nvFatbin write, and the message that names the file and the defect.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "driver/elf_file.hpp"
#include "error_checks.hpp"
#include "ptxrt/core/device_code.hpp"
#include "ptxrt/core/fatbin.hpp"
#include "ptxrt/core/jit.hpp"
#include "ptxrt/core/program.hpp"

namespace fs = std::filesystem;
using ptxrt::DeviceCodeReader;
using ptxrt::DeviceObjectKind;
using ptxrt::ErrorKind;
using ptxrt::testing::check_error;

namespace {

const fs::path link_data = fs::path(PTXRT_SOURCE_DIR) / "tests/data/link";

ptxrt::Image compiled(const std::string& arch, ptxrt::ImageFormat format,
                      std::vector<std::string> extra_options = {}) {
  ptxrt::CompileOptions options;
  options.target = {arch, format, {}};
  options.extra_options = std::move(extra_options);
  return ptxrt::compile(ptxrt::Program::from_file(link_data / "link_math.cu"), options);
}

// link_math.cu as relocatable device code: the CUBIN a library would ship.
const std::string& relocatable_cubin() {
  static const std::string cubin = compiled("sm_90", ptxrt::ImageFormat::cubin, {"-rdc=true"}).data;
  return cubin;
}

const std::string& fatbin() {
  static const std::string bytes =
      compiled("sm_90,compute_90", ptxrt::ImageFormat::fatbin, {"-rdc=true"}).data;
  return bytes;
}

template <class T>
void put(std::string& bytes, std::uint64_t offset, T value) {
  REQUIRE(offset + sizeof value <= bytes.size());
  std::memcpy(bytes.data() + offset, &value, sizeof value);
}

template <class T>
T get(const std::string& bytes, std::uint64_t offset) {
  T value{};
  std::memcpy(&value, bytes.data() + offset, sizeof value);
  return value;
}

// Where section `name`'s header is in an ELF file, and its index.
struct SectionHeader {
  std::uint64_t offset = 0;
  std::uint16_t index = 0;
};

SectionHeader header_of(const std::string& elf, std::string_view name) {
  const ptxrt::detail::ElfFile file(elf, ptxrt::detail::ElfMachine::any);
  for (std::uint16_t index = 0; index < file.sections().size(); ++index)
    if (file.sections()[index].name == name)
      return {get<std::uint64_t>(elf, 0x28) + index * std::uint64_t{64}, index};
  FAIL("no section " << name);
  return {};
}

// Where section `name`'s contents are in an ELF file.
std::uint64_t contents_of(const std::string& elf, std::string_view name) {
  return get<std::uint64_t>(elf, header_of(elf, name).offset + 0x18);
}

void check_refused(const std::string& bytes, const std::string& name, std::string_view fragment,
                   DeviceCodeReader reader = DeviceCodeReader::linker) {
  check_error([&] { ptxrt::check_device_code(bytes, name, reader); }, ErrorKind::invalid_argument,
              fragment);
}

// A System V archive of `members` (name, bytes), as ar writes it without a symbol table.
std::string archive_of(const std::vector<std::pair<std::string, std::string>>& members) {
  std::string archive = "!<arch>\n";
  for (const auto& [name, bytes] : members) {
    char header[61];
    std::snprintf(header, sizeof header, "%-16s%-12s%-6s%-6s%-8s%-10zu`\n", (name + "/").c_str(),
                  "0", "0", "0", "644", bytes.size());
    archive += std::string(header, 60) + bytes;
    if (bytes.size() % 2 != 0) archive += '\n';
  }
  return archive;
}

}  // namespace

TEST_CASE(
    "the check recognises a CUBIN, PTX, a fatbin and LTO-IR as NVRTC and nvFatbin write them") {
  const ptxrt::DeviceCode cubin =
      ptxrt::check_device_code(relocatable_cubin(), "math.cubin", DeviceCodeReader::linker);
  CHECK(cubin.kind == DeviceObjectKind::cubin);
  CHECK(cubin.architectures == std::vector<std::string>{"sm_90"});
  const ptxrt::DeviceCode ptx = ptxrt::check_device_code(
      compiled("compute_80", ptxrt::ImageFormat::ptx).data, "math.ptx", DeviceCodeReader::loader);
  CHECK(ptx.kind == DeviceObjectKind::ptx);
  CHECK(ptx.architectures == std::vector<std::string>{"compute_80"});
  const ptxrt::DeviceCode fat =
      ptxrt::check_device_code(fatbin(), "math.fatbin", DeviceCodeReader::loader);
  CHECK(fat.kind == DeviceObjectKind::fatbin);
  CHECK(fat.architectures == std::vector<std::string>{"sm_90", "compute_90"});
  const ptxrt::DeviceCode ltoir = ptxrt::check_device_code(
      compiled("sm_90", ptxrt::ImageFormat::ltoir).data, "math.ltoir", DeviceCodeReader::linker);
  CHECK(ltoir.kind == DeviceObjectKind::ltoir);
  CHECK(ltoir.architectures.empty());
}

TEST_CASE("a damaged ELF header is refused naming the file and the field") {
  const std::string& cubin = relocatable_cubin();
  check_refused(cubin.substr(0, 63), "a.cubin",
                "a.cubin: malformed CUBIN: 63 bytes is shorter than an ELF header (64)");
  std::string changed = cubin;
  changed[4] = 1;
  check_refused(changed, "a.cubin", "a.cubin: malformed CUBIN: ELF class 1, encoding 1");
  changed = cubin;
  put<std::uint32_t>(changed, 0x14, 2);
  check_refused(changed, "a.cubin", "ELF version 1 (e_ident), 2 (e_version)");
  changed = cubin;
  put<std::uint16_t>(changed, 0x34, 52);
  check_refused(changed, "a.cubin", "ELF header size (e_ehsize) 52 is not 64");
  changed = cubin;
  put<std::uint16_t>(changed, 0x38, 1);  // e_phnum: one program header, of e_phentsize 0
  check_refused(changed, "a.cubin", "program header size (e_phentsize) 0 is not 56");
  put<std::uint16_t>(changed, 0x36, 56);
  put<std::uint64_t>(changed, 0x20, cubin.size() - 8);
  check_refused(changed, "a.cubin",
                "program header table (1 x 56 bytes at offset " + std::to_string(cubin.size() - 8) +
                    ") runs past the end");
}

TEST_CASE(
    "an overwritten e_shoff, e_shnum, e_shentsize or e_shstrndx is refused before a section "
    "is read") {
  const std::string& cubin = relocatable_cubin();
  const auto table = get<std::uint64_t>(cubin, 0x28);
  const auto count = get<std::uint16_t>(cubin, 0x3c);
  const std::string end = "runs past the end (" + std::to_string(cubin.size()) + " bytes)";
  std::string changed = cubin;
  put<std::uint64_t>(changed, 0x28, table + 64);
  check_refused(changed, "a.cubin",
                "section header table (" + std::to_string(count) + " x 64 bytes at offset " +
                    std::to_string(table + 64) + ") " + end);
  put<std::uint64_t>(changed, 0x28, ~std::uint64_t{0} - 16);  // offset + size overflows
  check_refused(changed, "a.cubin", end);
  changed = cubin;
  put<std::uint16_t>(changed, 0x3c, count + 1);
  check_refused(changed, "a.cubin", end);
  put<std::uint16_t>(changed, 0x3c, 0);
  check_refused(changed, "a.cubin", "no section header table (e_shnum is 0)");
  changed = cubin;
  put<std::uint16_t>(changed, 0x3a, 40);
  check_refused(changed, "a.cubin", "section header size (e_shentsize) 40 is not 64");
  changed = cubin;
  put<std::uint16_t>(changed, 0x3e, count);
  check_refused(changed, "a.cubin",
                "section name table index (e_shstrndx) " + std::to_string(count) +
                    " is not below the " + std::to_string(count) + " sections");
  put<std::uint16_t>(changed, 0x3e, header_of(cubin, ".symtab").index);
  check_refused(changed, "a.cubin", "has type 2, not a string table (3)");
}

TEST_CASE("a section whose sh_offset or sh_size runs past the end is refused naming it") {
  const std::string& cubin = relocatable_cubin();
  const SectionHeader info = header_of(cubin, ".nv.info");
  const auto size = get<std::uint64_t>(cubin, info.offset + 0x20);
  const std::string section = "section " + std::to_string(info.index) + " (.nv.info)";
  std::string changed = cubin;
  put<std::uint64_t>(changed, info.offset + 0x18, cubin.size() - 4);
  check_refused(changed, "a.cubin",
                "a.cubin: malformed CUBIN: " + section + " at offset " +
                    std::to_string(cubin.size() - 4) + " + " + std::to_string(size) +
                    " bytes runs past the end (" + std::to_string(cubin.size()) + " bytes)");
  changed = cubin;
  put<std::uint64_t>(changed, info.offset + 0x20, ~std::uint64_t{0});  // offset + size overflows
  check_refused(changed, "a.cubin", section + " at offset");
  changed = cubin;
  put<std::uint32_t>(changed, info.offset, 0xfffff);  // sh_name
  check_refused(changed, "a.cubin", "name offset 1048575 is past the section name table");
  changed = cubin;
  put<std::uint64_t>(changed, info.offset + 0x30, 3);  // sh_addralign
  check_refused(changed, "a.cubin", "is aligned to 3 bytes, not a power of two");
  put<std::uint64_t>(changed, info.offset + 0x30, std::uint64_t{1} << 40);
  check_refused(changed, "a.cubin", "not a power of two up to 65536");
}

TEST_CASE("links, symbols, relocations and .nv.info records must point inside their tables") {
  const std::string& cubin = relocatable_cubin();
  const auto count = get<std::uint16_t>(cubin, 0x3c);
  const SectionHeader symbols = header_of(cubin, ".symtab");
  const auto symbol_count = get<std::uint64_t>(cubin, symbols.offset + 0x20) / 24;
  std::string changed = cubin;
  put<std::uint32_t>(changed, symbols.offset + 0x28, count);  // sh_link
  check_refused(changed, "a.cubin", "(.symtab) links to section " + std::to_string(count));
  changed = cubin;
  put<std::uint64_t>(changed, symbols.offset + 0x38, 16);  // sh_entsize
  check_refused(changed, "a.cubin", "(.symtab) has entries of 16 bytes, not 24");
  changed = cubin;
  const std::uint64_t last_symbol = contents_of(cubin, ".symtab") + (symbol_count - 1) * 24;
  put<std::uint32_t>(changed, last_symbol, 0xffffff);  // st_name
  check_refused(changed, "a.cubin",
                "symbol " + std::to_string(symbol_count - 1) +
                    "'s name offset 16777215 is past its string table");
  changed = cubin;
  put<std::uint16_t>(changed, last_symbol + 6, count);  // st_shndx
  check_refused(changed, "a.cubin", "is in section " + std::to_string(count));

  const std::uint64_t relocation = contents_of(cubin, ".rela.debug_frame");
  changed = cubin;
  put<std::uint32_t>(changed, relocation + 12, static_cast<std::uint32_t>(symbol_count));
  check_refused(changed, "a.cubin",
                "relocation section .rela.debug_frame: relocation 0 refers to symbol " +
                    std::to_string(symbol_count));
  changed = cubin;
  put<std::uint64_t>(changed, relocation, 1 << 20);
  check_refused(changed, "a.cubin", "relocation 0 at offset 1048576 is outside section");

  // EIATTR_REGCOUNT's symbol, in the first record of the module-wide .nv.info.
  changed = cubin;
  put<std::uint32_t>(changed, contents_of(cubin, ".nv.info") + 4,
                     static_cast<std::uint32_t>(symbol_count));
  check_refused(changed, "a.cubin",
                "attribute 47 in .nv.info names symbol " + std::to_string(symbol_count));
  changed = cubin;
  put<std::uint32_t>(changed, contents_of(cubin, ".nv.prototype"), 1u << 30);
  check_refused(changed, "a.cubin", ".nv.prototype names symbol 1073741824 at offset 0");
}

TEST_CASE("a section nvJitLink finds by name must have the type of that name") {
  const std::string& cubin = relocatable_cubin();
  std::string changed = cubin;
  put<std::uint32_t>(changed, header_of(cubin, ".note.nv.cuinfo").offset + 4, 1);  // PROGBITS
  check_refused(changed, "a.cubin", "(.note.nv.cuinfo) has type 1 and flags");
  changed = cubin;
  const SectionHeader relocations = header_of(cubin, ".rela.debug_frame");
  put<std::uint32_t>(changed, relocations.offset + 0x2c, header_of(cubin, ".symtab").index);
  check_refused(changed, "a.cubin", "not to the section they are named after");
  changed = cubin;
  put<std::uint32_t>(changed, relocations.offset, 0);  // sh_name: "", shorter than ".rela"
  check_refused(changed, "a.cubin", "not to the section they are named after");
  // Flagged as code, whose sh_info is not a section index: still checked as relocations' is.
  changed = cubin;
  const auto count = get<std::uint16_t>(cubin, 0x3c);
  put<std::uint64_t>(changed, relocations.offset + 0x8, 0x4);  // sh_flags: SHF_EXECINSTR
  put<std::uint32_t>(changed, relocations.offset + 0x2c, 0x7fffffff);
  check_refused(changed, "a.cubin",
                "(.rela.debug_frame) refers (sh_info) to section 2147483647, but there are " +
                    std::to_string(count) + " sections");
}

TEST_CASE("a fatbin whose header or entries claim more bytes than there are is refused") {
  const std::string& fat = fatbin();
  check_refused(fat.substr(0, fat.size() / 2), "a.fatbin",
                "a.fatbin: not a well-formed fatbin: its header claims " +
                    std::to_string(fat.size() - 16) + " bytes after 16, but there are " +
                    std::to_string(fat.size() / 2));
  std::string changed = fat;
  put<std::uint64_t>(changed, 16 + 8, fat.size());  // the first entry's payload size
  check_refused(changed, "a.fatbin", "entry 1 at offset 16 (a ");
  changed = fat;
  put<std::uint32_t>(changed, 16 + 4, 48);  // the first entry's header size
  check_refused(changed, "a.fatbin", "entry 1 at offset 16 has a 48-byte header, less than 64");
  changed = fat;
  put<std::uint16_t>(changed, 16, 3);  // kind
  check_refused(changed, "a.fatbin", "entry 1 at offset 16 has unknown kind 3");
  changed = fat;
  put<std::uint32_t>(changed, 16 + 36, 4096);  // the entry's name, past its header
  check_refused(changed, "a.fatbin", "entry 1 at offset 16's name (4096 bytes");
}

TEST_CASE(
    "a compressed fatbin entry must declare sizes that its payload and zstd frame agree "
    "with") {
  const std::string& fat = fatbin();
  const std::vector<ptxrt::FatbinEntry> entries = ptxrt::read_fatbin(fat);
  REQUIRE(entries.size() == 2);
  REQUIRE(entries[1].compressed);  // nvFatbin compresses PTX with zstd
  const std::uint64_t entry = 16 + get<std::uint32_t>(fat, 16 + 4) + entries[0].payload.size();
  const std::string where = "entry 2 at offset " + std::to_string(entry);
  std::string changed = fat;
  put<std::uint32_t>(changed, entry + 16,
                     static_cast<std::uint32_t>(entries[1].payload.size() + 1));
  check_refused(changed, "a.fatbin",
                where + " declares " + std::to_string(entries[1].payload.size() + 1) +
                    " compressed bytes in a payload of");
  changed = fat;
  put<std::uint64_t>(changed, entry + 56, std::uint64_t{1} << 31);
  check_refused(changed, "a.fatbin", "bytes once decompressed (at most 1 GiB)");
  const auto declared = get<std::uint64_t>(fat, entry + 56);
  put<std::uint64_t>(changed, entry + 56, declared + 1);
  check_refused(changed, "a.fatbin",
                where + " declares " + std::to_string(declared + 1) +
                    " bytes once decompressed, but its zstd frame holds " +
                    std::to_string(declared));
}

TEST_CASE("a damaged CUBIN or PTX inside a fatbin is refused with the path to the defect") {
  std::string changed = fatbin();
  const std::vector<ptxrt::FatbinEntry> entries = ptxrt::read_fatbin(changed);
  const auto cubin_at = static_cast<std::uint64_t>(entries[0].payload.data() - changed.data());
  put<std::uint16_t>(changed, cubin_at + 0x3c, 0);  // the CUBIN's e_shnum
  check_refused(changed, "a.fatbin",
                "a.fatbin: entry 1 (sm_90 CUBIN): malformed CUBIN: no section header table");
}

TEST_CASE("each LTO-IR form is recognised: NVRTC's, and LLVM bitcode bare and wrapped") {
  const std::string nvrtc = compiled("sm_90", ptxrt::ImageFormat::ltoir).data;
  CHECK(ptxrt::check_device_code(nvrtc, "a.ltoir", DeviceCodeReader::linker).kind ==
        DeviceObjectKind::ltoir);
  std::string changed = nvrtc;
  put<std::uint32_t>(changed, 0x10, static_cast<std::uint32_t>(nvrtc.size()));
  check_refused(
      changed, "a.ltoir",
      "a.ltoir: LTO-IR header says its IR starts at byte " + std::to_string(nvrtc.size()));
  check_refused(nvrtc.substr(0, 40), "a.ltoir", "LTO-IR of 40 bytes is no longer than its header");

  const std::string bitcode("BC\xc0\xde\x35\x14\x00\x00", 8);
  CHECK(ptxrt::check_device_code(bitcode, "a.bc", DeviceCodeReader::linker).kind ==
        DeviceObjectKind::ltoir);
  check_refused(bitcode.substr(0, 6), "a.bc", "LLVM bitcode of 6 bytes, not a whole number");
  std::string wrapper(20, '\0');
  put<std::uint32_t>(wrapper, 0, 0x0B17C0DE);
  put<std::uint32_t>(wrapper, 8, 20);
  put<std::uint32_t>(wrapper, 12, 8);
  wrapper += bitcode;
  CHECK(ptxrt::check_device_code(wrapper, "a.bc", DeviceCodeReader::linker).kind ==
        DeviceObjectKind::ltoir);
  put<std::uint32_t>(wrapper, 12, 9);
  check_refused(wrapper, "a.bc", "bitcode wrapper says its bitcode is at offset 20 + 9 bytes");
}

TEST_CASE("an archive's members, long names and symbol table must lie inside it") {
  const std::string& cubin = relocatable_cubin();
  const std::string archive = archive_of({{"math.cubin", cubin}});
  const ptxrt::DeviceCode library =
      ptxrt::check_device_code(archive, "libmath.a", DeviceCodeReader::linker);
  CHECK(library.kind == DeviceObjectKind::library);
  CHECK(library.architectures == std::vector<std::string>{"sm_90"});
  check_refused(archive.substr(0, archive.size() - 2), "libmath.a",
                "libmath.a: malformed static library: member math.cubin at offset 8 + " +
                    std::to_string(cubin.size()) + " bytes runs past the end");
  std::string changed = archive;
  changed.replace(8 + 48, 10, "12x4      ");
  check_refused(changed, "libmath.a",
                "member header at offset 8 has the size \"12x4\", not a decimal number");
  changed = archive;
  changed[8 + 58] = '!';
  check_refused(changed, "libmath.a", "member header at offset 8 does not end with");
  changed = archive;
  changed.replace(8, 16, "/40             ");
  check_refused(changed, "libmath.a", "names itself at 40 in the long-name table");
  // A symbol table ("/") whose one entry points into the middle of a member.
  std::string table("\0\0\0\1\0\0\0\x60sym\0", 12);
  changed = archive_of({{"", table}, {"math.cubin", cubin}});
  changed.replace(8, 16, "/               ");
  check_refused(changed, "libmath.a", "symbol table entry 0 points at offset 96");
  // A member's CUBIN with a damaged header: the message leads from the archive to the field.
  std::string damaged = cubin;
  put<std::uint16_t>(damaged, 0x3a, 40);
  check_refused(archive_of({{"math.cubin", damaged}}), "libmath.a",
                "libmath.a: member math.cubin: malformed CUBIN: section header size (e_shentsize) "
                "40 is not 64");
  check_refused(archive_of({{"notes.txt", "hello\n"}}), "libmath.a",
                "libmath.a: member notes.txt: it is not an ELF object");
}

TEST_CASE("the loader's check refuses what only the linker takes, naming the image") {
  check_refused(archive_of({{"math.cubin", relocatable_cubin()}}), "libmath.a",
                "libmath.a cannot be loaded: it is a static library, which only the device "
                "linker takes; the driver loads a CUBIN, PTX or a fatbin",
                DeviceCodeReader::loader);
  check_refused(compiled("sm_90", ptxrt::ImageFormat::ltoir).data, "",
                "the image cannot be loaded: it is LTO-IR", DeviceCodeReader::loader);
  check_refused("", "k.cu sm_90", "k.cu sm_90 cannot be loaded: it is empty",
                DeviceCodeReader::loader);
}

TEST_CASE("weak data given another size than in another input is a link error naming both") {
  std::string changed = relocatable_cubin();
  const ptxrt::detail::ElfFile elf(changed);
  std::uint64_t index = 0;
  while (index < elf.symbols().size() && elf.symbols()[index].name != "__UFT_CANONICAL") ++index;
  REQUIRE(index < elf.symbols().size());
  put<std::uint64_t>(changed, contents_of(changed, ".symtab") + index * 24 + 16, 77);  // st_size
  ptxrt::Program program = ptxrt::Program::from_file(link_data / "link_main.cu");
  program.add_device_object(ptxrt::DeviceObject::from_bytes(changed, "math.cubin"));
  ptxrt::CompileOptions options;
  options.target = {"sm_90", ptxrt::ImageFormat::cubin, {}};
  check_error([&] { ptxrt::compile(program, options); }, ErrorKind::link,
              "symbol __UFT_CANONICAL is 8 bytes in link_main.cu but 77 bytes in math.cubin");
}
