// libFuzzer target: the tuning-database reader, TuningDatabase::parse, which records(), record()
// and `ptxrt tune show` put every file's text through. A malformed file must end in
// ptxrt::Error. A file it accepts must survive what record() does to it (written back by
// serialize, read again, the same text), and the run-time lookup must work on what was read.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "ptxrt/core/error.hpp"
#include "ptxrt/tune/tuning_database.hpp"

using ptxrt::TuningDatabase;
using ptxrt::TuningRecord;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<TuningRecord> records;
  try {
    records = TuningDatabase::parse(text, "fuzz.json");
  } catch (const ptxrt::Error&) {
    return 0;
  }
  const std::string written = TuningDatabase::serialize(records);
  if (TuningDatabase::serialize(TuningDatabase::parse(written, "written.json")) != written)
    std::abort();
  for (const TuningRecord& record : records)
    ptxrt::choose(records, record.key, ptxrt::TuningConfig()).describe();
  return 0;
}
