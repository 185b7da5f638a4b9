#include "vector/hnsw_index.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <thread>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "hnswlib/hnswlib.h"
#include "nlohmann/json.hpp"
#include "util/check.h"
#include "util/hash.h"
#include "util/status_macros.h"
#include "vector/int8_element.h"

namespace strata::vector {
namespace {

constexpr int kMetaFormat = 1;
constexpr size_t kInitialCapacity = 1024;

// A fast 64-bit checksum of a file's bytes (8 bytes at a time, multiply-xor, the last
// size % 8 one at a time); catches truncation and garbage, not tampering. Fed in pieces of any
// size: it keeps up to 7 bytes of a word between them.
class Checksum {
 public:
  void Update(const char* data, size_t n) {
    if (pending_ > 0) {
      const size_t take = std::min(n, sizeof word_ - pending_);
      std::memcpy(word_ + pending_, data, take);
      pending_ += take;
      data += take;
      n -= take;
      if (pending_ < sizeof word_) return;
      MixWord(word_);
      pending_ = 0;
    }
    size_t i = 0;
    for (; i + 8 <= n; i += 8) MixWord(data + i);
    std::memcpy(word_, data + i, n - i);
    pending_ = n - i;
  }
  uint64_t Final() const {
    uint64_t h = h_;
    for (size_t i = 0; i < pending_; ++i) {
      h = (h ^ static_cast<unsigned char>(word_[i])) * 0x100000001b3ULL;
    }
    return h;
  }

 private:
  void MixWord(const char* at) {
    uint64_t w;
    std::memcpy(&w, at, 8);
    h_ = (h_ ^ w) * 0xff51afd7ed558ccdULL;
    h_ ^= h_ >> 29;
  }

  uint64_t h_ = 0x9E3779B97F4A7C15ULL;
  char word_[8];
  size_t pending_ = 0;
};

struct CloseFile {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

// A file read front to back and checksummed (Checksum) as it is read.
class ChecksummedFile {
 public:
  // Errors: NotFound when the file cannot be opened, DataLoss when it cannot be read.
  static absl::StatusOr<ChecksummedFile> Open(const std::string& path) {
    std::unique_ptr<std::FILE, CloseFile> file(std::fopen(path.c_str(), "rb"));
    if (file == nullptr) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
    struct stat st;
    if (::fstat(::fileno(file.get()), &st) != 0) {
      return absl::DataLossError(absl::StrCat(path, ": stat"));
    }
    return ChecksummedFile(std::move(file), static_cast<size_t>(st.st_size));
  }

  // The file's size when opened.
  size_t size() const { return size_; }
  // Reads the next `n` bytes into `out`; false when the file ends (or fails) first.
  bool Read(void* out, size_t n) {
    auto* to = static_cast<char*>(out);
    while (n > 0) {
      if (at_ == filled_) {
        // A read at least as large as the buffer goes straight to `out`.
        if (n >= kBufferBytes) {
          const size_t got = std::fread(to, 1, n, file_.get());
          checksum_.Update(to, got);
          return got == n;
        }
        if (!Fill()) return false;
      }
      const size_t take = std::min(n, filled_ - at_);
      std::memcpy(to, buffer_.data() + at_, take);
      at_ += take;
      to += take;
      n -= take;
    }
    return true;
  }
  template <typename... T>
  bool ReadValues(T&... values) {
    return (Read(&values, sizeof values) && ...);
  }
  // Reads what is left; true when that was nothing.
  bool AtEnd() {
    bool nothing = at_ == filled_;
    while (Fill()) nothing = false;
    at_ = filled_;
    return nothing;
  }
  bool failed() const { return std::ferror(file_.get()) != 0; }
  // The checksum of what was read.
  uint64_t checksum() const { return checksum_.Final(); }

 private:
  ChecksummedFile(std::unique_ptr<std::FILE, CloseFile> file, size_t size)
      : file_(std::move(file)), size_(size), buffer_(kBufferBytes) {}

  // Refills the empty buffer; false at the end of the file.
  bool Fill() {
    filled_ = std::fread(buffer_.data(), 1, buffer_.size(), file_.get());
    at_ = 0;
    checksum_.Update(buffer_.data(), filled_);
    return filled_ > 0;
  }

  static constexpr size_t kBufferBytes = 1 << 20;
  std::unique_ptr<std::FILE, CloseFile> file_;
  size_t size_;
  std::vector<char> buffer_;
  size_t at_ = 0, filled_ = 0;
  Checksum checksum_;
};

// A new file written front to back and checksummed (Checksum) as it is written, a buffer at
// a time.
class ChecksummedWriter {
 public:
  // Errors: Internal when the file cannot be created.
  static absl::StatusOr<ChecksummedWriter> Create(const std::string& path) {
    std::unique_ptr<std::FILE, CloseFile> file(std::fopen(path.c_str(), "wb"));
    if (file == nullptr) return absl::InternalError(absl::StrCat(path, ": cannot create"));
    return ChecksummedWriter(std::move(file), path);
  }

  void Write(const void* data, size_t n) {
    const auto* from = static_cast<const char*>(data);
    bytes_ += n;
    if (n > buffer_.size() - filled_) {
      Flush();
      // A write at least as large as the buffer goes straight to the file.
      if (n >= buffer_.size()) {
        checksum_.Update(from, n);
        std::fwrite(from, 1, n, file_.get());
        return;
      }
    }
    std::memcpy(buffer_.data() + filled_, from, n);
    filled_ += n;
  }
  template <typename... T>
  void WriteValues(const T&... values) {
    (Write(&values, sizeof values), ...);
  }
  // Writes what is buffered and closes the file; Internal when any write failed (a full
  // disk, say).
  absl::Status Close() {
    Flush();
    const bool failed = std::ferror(file_.get()) != 0;
    if (std::fclose(file_.release()) != 0 || failed) {
      return absl::InternalError(absl::StrCat(path_, ": write error"));
    }
    return absl::OkStatus();
  }
  // The checksum and size of what was written.
  uint64_t checksum() const { return checksum_.Final(); }
  size_t bytes() const { return bytes_; }

 private:
  ChecksummedWriter(std::unique_ptr<std::FILE, CloseFile> file, std::string path)
      : file_(std::move(file)), path_(std::move(path)), buffer_(kBufferBytes) {}

  void Flush() {
    checksum_.Update(buffer_.data(), filled_);
    std::fwrite(buffer_.data(), 1, filled_, file_.get());
    filled_ = 0;
  }

  static constexpr size_t kBufferBytes = 1 << 20;
  std::unique_ptr<std::FILE, CloseFile> file_;
  std::string path_;
  std::vector<char> buffer_;
  size_t filled_ = 0;
  size_t bytes_ = 0;
  Checksum checksum_;
};

using Graph = hnswlib::HierarchicalNSW<float>;

// Fills `g`, constructed empty (HierarchicalNSW(space)), as hnswlib 0.6.2's loadIndex would
// from `file` (named `path`), reading it once front to back; returns the capacity the file
// gives. The graph gets that capacity when it is at most twice the elements held plus an
// initial capacity (as a graph grows: HnswIndex::ReserveLocked), else room for the elements
// alone, and Load grows it once the file's checksum is known good: garbage allocates at most
// about twice the file's size. loadIndex first walks every element to check the layout, with
// two tellg()s an element (an lseek each, ~2 us on this VM), then reads the file again: a 100K
// store's index was ready 0.65 s after start with it, 0.36 s with this (PERF.md, "Session
// 42"). The layout is checked as it is read: sizes or a count that do not fit the space and
// the file are FailedPrecondition. On an error `g` holds only what its destructor can free.
absl::StatusOr<size_t> ReadGraph(const std::string& path, ChecksummedFile& file,
                                 hnswlib::SpaceInterface<float>& space, Graph& g) {
  // What the destructor frees, safe to free before anything is read (the empty constructor
  // leaves them unset).
  g.data_level0_memory_ = nullptr;
  g.linkLists_ = nullptr;
  g.visited_list_pool_ = nullptr;
  g.cur_element_count = 0;
  g.num_deleted_ = 0;

  const size_t file_bytes = file.size();
  auto corrupt = [&path](const char* what) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": not an index of this space (", what, ")"));
  };

  // The header, in saveIndex's order.
  size_t count = 0;
  size_t capacity = 0;
  if (!file.ReadValues(g.offsetLevel0_, capacity, count, g.size_data_per_element_, g.label_offset_,
                       g.offsetData_, g.maxlevel_, g.enterpoint_node_, g.maxM_, g.maxM0_, g.M_,
                       g.mult_, g.ef_construction_)) {
    return corrupt("header cut short");
  }
  g.data_size_ = space.get_data_size();
  g.fstdistfunc_ = space.get_dist_func();
  g.dist_func_param_ = space.get_dist_func_param();
  g.size_links_level0_ = g.maxM0_ * sizeof(hnswlib::tableint) + sizeof(hnswlib::linklistsizeint);
  g.size_links_per_element_ =
      g.maxM_ * sizeof(hnswlib::tableint) + sizeof(hnswlib::linklistsizeint);
  if (g.maxM_ == 0 || g.maxM0_ > (1u << 20) || g.offsetLevel0_ != 0 ||
      g.offsetData_ != g.size_links_level0_ ||
      g.label_offset_ != g.size_links_level0_ + g.data_size_ ||
      g.size_data_per_element_ != g.label_offset_ + sizeof(hnswlib::labeltype)) {
    return corrupt("element layout");
  }
  if (count > capacity || count > file_bytes / g.size_data_per_element_ ||
      capacity > std::numeric_limits<size_t>::max() / g.size_data_per_element_) {
    return corrupt("element count");
  }
  // loadIndex's capacity: the file's, or none when the graph is empty.
  if (count == 0) capacity = 0;
  const size_t room = capacity <= 2 * count + kInitialCapacity ? capacity : count;
  g.max_elements_ = room;

  g.data_level0_memory_ = static_cast<char*>(std::malloc(room * g.size_data_per_element_));
  if (g.data_level0_memory_ == nullptr && room > 0) {
    return absl::ResourceExhaustedError(absl::StrCat(path, ": no memory for ", count, " elements"));
  }
  if (!file.Read(g.data_level0_memory_, count * g.size_data_per_element_)) {
    return corrupt("elements cut short");
  }
  std::vector<std::mutex>(room).swap(g.link_list_locks_);
  std::vector<std::mutex>(Graph::max_update_element_locks).swap(g.link_list_update_locks_);
  g.visited_list_pool_ = new hnswlib::VisitedListPool(1, static_cast<int>(room));
  g.linkLists_ = static_cast<char**>(std::malloc(sizeof(char*) * room));
  if (g.linkLists_ == nullptr && room > 0) {
    return absl::ResourceExhaustedError(absl::StrCat(path, ": no memory for ", count, " elements"));
  }
  g.element_levels_ = std::vector<int>(room);
  g.revSize_ = 1.0 / g.mult_;
  g.ef_ = 10;
  g.label_lookup_.reserve(count);
  // From here the destructor frees the upper levels' lists of elements below the count whose
  // level is set: each is set once its list is allocated.
  g.cur_element_count = count;
  for (size_t i = 0; i < count; ++i) {
    g.label_lookup_[g.getExternalLabel(static_cast<hnswlib::tableint>(i))] =
        static_cast<hnswlib::tableint>(i);
    hnswlib::linklistsizeint bytes = 0;
    if (!file.ReadValues(bytes)) return corrupt("links cut short");
    g.linkLists_[i] = nullptr;
    if (bytes == 0) continue;
    if (bytes % g.size_links_per_element_ != 0 || bytes > file_bytes) return corrupt("links");
    g.linkLists_[i] = static_cast<char*>(std::malloc(bytes));
    if (g.linkLists_[i] == nullptr) {
      return absl::ResourceExhaustedError(absl::StrCat(path, ": no memory for links"));
    }
    g.element_levels_[i] = static_cast<int>(bytes / g.size_links_per_element_);
    if (!file.Read(g.linkLists_[i], bytes)) return corrupt("links cut short");
  }
  if (file.failed()) return absl::DataLossError(absl::StrCat(path, ": read error"));
  if (!file.AtEnd()) return corrupt("bytes after the last element");
  for (size_t i = 0; i < count; ++i) {
    if (g.isMarkedDeleted(static_cast<hnswlib::tableint>(i))) ++g.num_deleted_;
  }
  return capacity;
}

// Writes `g` to `file` as hnswlib 0.6.2's saveIndex does (the format ReadGraph reads), so the
// file is checksummed as it is written rather than read back after (0.6 GB at 1M).
void WriteGraph(const Graph& g, ChecksummedWriter& file) {
  file.WriteValues(g.offsetLevel0_, g.max_elements_, g.cur_element_count, g.size_data_per_element_,
                   g.label_offset_, g.offsetData_, g.maxlevel_, g.enterpoint_node_, g.maxM_,
                   g.maxM0_, g.M_, g.mult_, g.ef_construction_);
  file.Write(g.data_level0_memory_, g.cur_element_count * g.size_data_per_element_);
  for (size_t i = 0; i < g.cur_element_count; ++i) {
    const hnswlib::linklistsizeint bytes =
        g.element_levels_[i] > 0 ? g.size_links_per_element_ * g.element_levels_[i] : 0;
    file.WriteValues(bytes);
    if (bytes > 0) file.Write(g.linkLists_[i], bytes);
  }
}

absl::Status SyncAndRename(const std::string& from, const std::string& to) {
  if (const int fd = ::open(from.c_str(), O_RDONLY); fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
  if (std::rename(from.c_str(), to.c_str()) != 0) {
    return absl::InternalError(absl::StrCat("cannot rename ", from, " to ", to));
  }
  return absl::OkStatus();
}

// A label's place in the chance sample: splitmix64's step, so that version ids, which come in
// order, are sampled evenly.
uint64_t SampleHash(int64_t label) {
  return Mix64(static_cast<uint64_t>(label) + 0x9E3779B97F4A7C15ULL);
}

}  // namespace

// hnswlib's view of vector/int8_element.h.
class Int8CosineSpace final : public hnswlib::SpaceInterface<float> {
 public:
  explicit Int8CosineSpace(size_t dimension) : dimension_(dimension) {}
  size_t get_data_size() override { return Int8ElementBytes(dimension_); }
  hnswlib::DISTFUNC<float> get_dist_func() override { return &Int8Distance; }
  void* get_dist_func_param() override { return &dimension_; }

 private:
  size_t dimension_;
};

namespace {

// The build parameters a saved graph must have been made with to be loaded.
std::string GraphParams() {
  return absl::StrCat("M=", HnswIndex::kM, ",ef_construction=", HnswIndex::kEfConstruction,
                      ",element=int8");
}

}  // namespace

HnswIndex::HnswIndex(int dimension)
    : dimension_(dimension),
      space_(std::make_unique<Int8CosineSpace>(dimension)),
      graph_(std::make_unique<hnswlib::HierarchicalNSW<float>>(space_.get(), kInitialCapacity, kM,
                                                               kEfConstruction)) {
  graph_->setEf(kEf);
}

HnswIndex::~HnswIndex() = default;

absl::StatusOr<std::pair<std::unique_ptr<HnswIndex>, IndexMeta>> HnswIndex::Load(
    const std::string& path, const std::string& fingerprint, int dimension) {
  std::ifstream meta_in(path + ".meta");
  if (!meta_in) return absl::NotFoundError(absl::StrCat(path, ".meta: absent"));
  const nlohmann::json meta = nlohmann::json::parse(meta_in, nullptr, /*allow_exceptions=*/false);
  // Every field present with its type, or the file is not ours to trust.
  auto is = [&meta](const char* name, auto check) {
    return meta.contains(name) && (meta[name].*check)();
  };
  if (!meta.is_object() || !is("format", &nlohmann::json::is_number_integer) ||
      !is("graph", &nlohmann::json::is_string) || !is("fingerprint", &nlohmann::json::is_string) ||
      !is("watermark", &nlohmann::json::is_number_integer) ||
      !is("bytes", &nlohmann::json::is_number_integer) ||
      !is("checksum", &nlohmann::json::is_string) || meta["format"].get<int>() != kMetaFormat) {
    return absl::FailedPreconditionError(absl::StrCat(path, ".meta: unreadable"));
  }
  if (meta["graph"].get<std::string>() != GraphParams()) {
    return absl::FailedPreconditionError(absl::StrCat(path, ": built with graph parameters ",
                                                      meta["graph"].get<std::string>(), ", not ",
                                                      GraphParams()));
  }
  if (meta["fingerprint"].get<std::string>() != fingerprint) {
    return absl::FailedPreconditionError(absl::StrCat(path, ": made by embedder ",
                                                      meta["fingerprint"].get<std::string>(),
                                                      ", not ", fingerprint));
  }
  // The graph is read and checksummed in one pass (the file twice was 0.6 GB read at 1M);
  // its size first, and its checksum before it is used or grown.
  ASSIGN_OR_RETURN(ChecksummedFile file, ChecksummedFile::Open(path));
  const auto mismatch = [&path](size_t bytes) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": truncated or corrupt (", bytes, " bytes, checksum mismatch)"));
  };
  if (static_cast<int64_t>(file.size()) != meta["bytes"].get<int64_t>()) {
    return mismatch(file.size());
  }
  auto index = std::make_unique<HnswIndex>(dimension);
  try {
    auto graph = std::make_unique<hnswlib::HierarchicalNSW<float>>(index->space_.get());
    ASSIGN_OR_RETURN(const size_t capacity, ReadGraph(path, file, *index->space_, *graph));
    if (absl::StrCat(file.checksum()) != meta["checksum"].get<std::string>()) {
      return mismatch(file.size());
    }
    if (capacity > graph->max_elements_) graph->resizeIndex(capacity);
    graph->setEf(kEf);
    index->graph_ = std::move(graph);
    index->ResampleLocked();  // Not shared yet: alone.
  } catch (const std::exception& e) {
    return absl::FailedPreconditionError(absl::StrCat(path, ": ", e.what()));
  }
  return std::pair(std::move(index), IndexMeta{.fingerprint = fingerprint,
                                               .watermark = meta["watermark"].get<int64_t>()});
}

absl::Status HnswIndex::Save(const std::string& path, const IndexMeta& meta) const {
  // Names of our own: another process may be saving the same index at the same moment, and
  // pairing its graph with our meta would pass the checksum.
  static std::atomic<uint64_t> saves{0};
  const std::string unique = absl::StrCat(".", ::getpid(), ".", saves++, ".tmp");
  const std::string tmp = path + unique;
  ASSIGN_OR_RETURN(ChecksummedWriter file, ChecksummedWriter::Create(tmp));
  {
    RoomLock::Hold hold(lock_, kSearches);
    WriteGraph(*graph_, file);
  }
  if (absl::Status closed = file.Close(); !closed.ok()) {
    std::remove(tmp.c_str());
    return closed;
  }
  RETURN_IF_ERROR(SyncAndRename(tmp, path));
  const nlohmann::json json = {
      {"format", kMetaFormat},           {"graph", GraphParams()},
      {"fingerprint", meta.fingerprint}, {"watermark", meta.watermark},
      {"bytes", file.bytes()},           {"checksum", absl::StrCat(file.checksum())}};
  const std::string meta_tmp = path + ".meta" + unique;
  {
    std::ofstream out(meta_tmp, std::ios::trunc);
    out << json.dump() << "\n";
    if (!out.flush()) return absl::InternalError(absl::StrCat("cannot write ", meta_tmp));
  }
  return SyncAndRename(meta_tmp, path + ".meta");
}

void HnswIndex::ReserveLocked(size_t n) {
  const size_t capacity = graph_->max_elements_;
  if (n <= capacity) return;
  graph_->resizeIndex(std::max(n, capacity * 2));
}

bool HnswIndex::HoldsLocked(int64_t label) const {
  const auto it = graph_->label_lookup_.find(static_cast<hnswlib::labeltype>(label));
  return it != graph_->label_lookup_.end() && !graph_->isMarkedDeleted(it->second);
}

void HnswIndex::SampleLocked(std::span<const int64_t> labels) {
  bool changed = false;
  for (int64_t label : labels) {
    const std::pair<uint64_t, int64_t> entry(SampleHash(label), label);
    if (sample_.size() == kChanceSample && entry > sample_.back()) continue;
    const auto at = std::lower_bound(sample_.begin(), sample_.end(), entry);
    // A sampled label added again (after a Remove) has a new vector: copied again too.
    changed = true;
    if (at != sample_.end() && *at == entry) continue;
    sample_.insert(at, entry);
    if (sample_.size() > kChanceSample) sample_.pop_back();
  }
  if (changed) CopySampleLocked();
}

void HnswIndex::ResampleLocked() {
  std::vector<std::pair<uint64_t, int64_t>> all;
  all.reserve(graph_->label_lookup_.size());
  for (const auto& [label, internal] : graph_->label_lookup_) {
    if (!graph_->isMarkedDeleted(internal)) {
      all.emplace_back(SampleHash(static_cast<int64_t>(label)), static_cast<int64_t>(label));
    }
  }
  const size_t keep = std::min(all.size(), kChanceSample);
  std::partial_sort(all.begin(), all.begin() + keep, all.end());
  all.resize(keep);
  sample_ = std::move(all);
  CopySampleLocked();
}

void HnswIndex::CopySampleLocked() {
  const size_t bytes = Int8ElementBytes(static_cast<size_t>(dimension_));
  sample_elements_.resize(sample_.size() * bytes);
  for (size_t i = 0; i < sample_.size(); ++i) {
    const auto it = graph_->label_lookup_.find(static_cast<hnswlib::labeltype>(sample_[i].second));
    STRATA_DCHECK(it != graph_->label_lookup_.end());  // Sampled only once inserted.
    std::memcpy(sample_elements_.data() + i * bytes, graph_->getDataByInternalId(it->second),
                bytes);
  }
}

std::vector<std::byte> HnswIndex::Element(std::span<const float> v) const {
  std::vector<std::byte> element(Int8ElementBytes(v.size()));
  QuantizeInt8(v, element);
  return element;
}

void HnswIndex::Add(int64_t label, std::span<const float> v) {
  AddParallel(std::span<const int64_t>(&label, 1), v, 1);
}

void HnswIndex::Remove(int64_t label) {
  RoomLock::Hold alone(lock_, RoomLock::kAlone);
  try {
    graph_->markDelete(static_cast<hnswlib::labeltype>(label));
  } catch (const std::exception&) {
    return;  // Not in the index: nothing to remove.
  }
  // A purge is rare, and removes a sampled label with odds kChanceSample / size().
  const std::pair<uint64_t, int64_t> entry(SampleHash(label), label);
  if (std::binary_search(sample_.begin(), sample_.end(), entry)) ResampleLocked();
}

std::optional<uint32_t> HnswIndex::LinkLocked(const std::byte* element, int64_t label,
                                              std::span<const int64_t> links,
                                              const std::function<bool(uint32_t)>& complete) {
  hnswlib::HierarchicalNSW<float>& g = *graph_;
  const auto external = static_cast<hnswlib::labeltype>(label);
  std::vector<hnswlib::tableint> neighbours;
  {
    std::unique_lock<std::mutex> lookup(g.cur_element_count_guard_);
    // Held and removed: addPoint takes the new vector in place.
    if (g.label_lookup_.contains(external)) return std::nullopt;
    for (const int64_t link : links) {
      const auto it = g.label_lookup_.find(static_cast<hnswlib::labeltype>(link));
      // One not held yet (this index is behind the one that linked it, or it was purged), or
      // still being inserted (its lock is held while it searches, and a search may wait for
      // this element's): searched for instead, rather than linked to fewer.
      if (it == g.label_lookup_.end() || !complete(it->second)) return std::nullopt;
      if (!g.isMarkedDeleted(it->second)) neighbours.push_back(it->second);
    }
  }
  if (neighbours.empty()) return std::nullopt;
  // Drawn as addPoint draws it (hnswlib's generator, which it does not guard either), and only
  // here, so that a vector searched for instead is drawn once, by addPoint.
  const int level = g.getRandomLevel(g.mult_);
  if (level > 0) {
    // A higher layer's links are searched for: 1 element in kM, on layers a kM-th the size.
    return g.addPoint(element, external, level);
  }
  hnswlib::tableint at;
  {
    std::unique_lock<std::mutex> adding(g.cur_element_count_guard_);
    at = static_cast<hnswlib::tableint>(g.cur_element_count++);  // Room reserved by the caller.
    g.label_lookup_[external] = at;
  }
  // As addPoint sets up an element, then links it as addPoint does the candidates its search
  // found (the heuristic keeps at most kM, and each neighbour links back).
  std::unique_lock<std::mutex> updating(
      g.link_list_update_locks_[at & (g.max_update_element_locks - 1)]);
  std::unique_lock<std::mutex> linking(g.link_list_locks_[at]);
  g.element_levels_[at] = 0;
  std::memset(g.data_level0_memory_ + at * g.size_data_per_element_ + g.offsetLevel0_, 0,
              g.size_data_per_element_);
  std::memcpy(g.getExternalLabeLp(at), &external, sizeof(external));
  std::memcpy(g.getDataByInternalId(at), element, g.data_size_);
  std::priority_queue<std::pair<float, hnswlib::tableint>,
                      std::vector<std::pair<float, hnswlib::tableint>>,
                      hnswlib::HierarchicalNSW<float>::CompareByFirst>
      candidates;
  for (const hnswlib::tableint n : neighbours) {
    candidates.emplace(g.fstdistfunc_(element, g.getDataByInternalId(n), g.dist_func_param_), n);
  }
  g.mutuallyConnectNewElement(element, at, candidates, 0, false);
  return at;
}

std::vector<int64_t> HnswIndex::Links(int64_t label) const {
  RoomLock::Hold searching(lock_, kSearches);
  hnswlib::HierarchicalNSW<float>& g = *graph_;  // Read only: hnswlib's getters are not const.
  const auto it = g.label_lookup_.find(static_cast<hnswlib::labeltype>(label));
  if (it == g.label_lookup_.end()) return {};
  hnswlib::linklistsizeint* list = g.get_linklist0(it->second);
  const auto* ids = reinterpret_cast<const hnswlib::tableint*>(list + 1);
  std::vector<int64_t> labels;
  labels.reserve(g.getListCount(list));
  for (size_t i = 0; i < g.getListCount(list); ++i) {
    labels.push_back(static_cast<int64_t>(g.getExternalLabel(ids[i])));
  }
  return labels;
}

void HnswIndex::AddParallel(std::span<const int64_t> labels, std::span<const float> vectors,
                            int threads, std::span<const std::vector<int64_t>> links) {
  STRATA_DCHECK(vectors.size() == labels.size() * static_cast<size_t>(dimension_));
  STRATA_DCHECK(links.empty() || links.size() == labels.size());
  absl::MutexLock adding(&add_mu_);
  std::vector<size_t> fresh;  // Positions in `labels` of the ones not held yet, each once.
  size_t first_new;  // The internal id the first of them gets.
  {
    RoomLock::Hold alone(lock_, RoomLock::kAlone);
    absl::flat_hash_set<int64_t> seen;
    fresh.reserve(labels.size());
    for (size_t i = 0; i < labels.size(); ++i) {
      if (!HoldsLocked(labels[i]) && seen.insert(labels[i]).second) fresh.push_back(i);
    }
    // Room for all of them now: growing moves the graph, which needs the lock alone.
    first_new = graph_->cur_element_count;
    ReserveLocked(first_new + fresh.size());
  }
  // By internal id from first_new on (given in the order inserts begin): inserted whole.
  std::unique_ptr<std::atomic<bool>[]> inserted(new std::atomic<bool>[fresh.size()]());
  const auto complete = [&](uint32_t id) {
    return id < first_new || inserted[id - first_new].load(std::memory_order_acquire);
  };
  auto add = [&](size_t i) {
    const std::vector<std::byte> element = Element(vectors.subspan(i * dimension_, dimension_));
    RoomLock::Hold inserting(lock_, kInserts);
    std::optional<uint32_t> at;
    if (!links.empty() && !links[i].empty()) {
      at = LinkLocked(element.data(), labels[i], links[i], complete);
    }
    if (!at) at = graph_->addPoint(element.data(), static_cast<hnswlib::labeltype>(labels[i]), -1);
    // A removed label added again keeps its element (addPoint's update).
    if (*at >= first_new) inserted[*at - first_new].store(true, std::memory_order_release);
  };
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < fresh.size(); i = next++) add(fresh[i]);
  };
  // hnswlib's first element must be inserted alone.
  if (size() == 0 && !fresh.empty()) {
    add(fresh[0]);
    next = 1;
  }
  {
    std::vector<std::jthread> pool;
    for (int t = 1; t < threads && static_cast<size_t>(t) < fresh.size(); ++t) {
      pool.emplace_back(work);
    }
    work();
  }
  // After the inserts: a search samples only labels the graph holds.
  std::vector<int64_t> added;
  added.reserve(fresh.size());
  for (size_t i : fresh) added.push_back(labels[i]);
  RoomLock::Hold alone(lock_, RoomLock::kAlone);
  SampleLocked(added);
}

ChanceLevel HnswIndex::Chance(std::span<const float> query) const {
  // The query as an element, as the graph compares it: byte dot products, not float ones.
  const std::vector<std::byte> element = Element(query);
  size_t dimension = static_cast<size_t>(dimension_);
  const size_t bytes = Int8ElementBytes(dimension);
  std::vector<float> similarities;
  similarities.reserve(kChanceSample);
  RoomLock::Hold searching(lock_, kSearches);
  for (size_t at = 0; at < sample_elements_.size(); at += bytes) {
    similarities.push_back(1.0f -
                           Int8Distance(element.data(), sample_elements_.data() + at, &dimension));
  }
  return ChanceLevelOf(similarities, graph_->cur_element_count - graph_->num_deleted_);
}

std::vector<Neighbor> HnswIndex::Search(std::span<const float> query, size_t k) const {
  std::vector<Neighbor> out;
  RoomLock::Hold searching(lock_, kSearches);
  if (graph_->cur_element_count == 0 || k == 0) return out;
  auto heap = graph_->searchKnn(Element(query).data(), k);
  // The graph compared the query's bytes; each one found is scored again against the query
  // itself, so a similarity is the one an exact scan of the stored vectors gives.
  out.reserve(heap.size());
  for (; !heap.empty(); heap.pop()) {
    const hnswlib::labeltype label = heap.top().second;
    const auto* element = reinterpret_cast<const std::byte*>(
        graph_->getDataByInternalId(graph_->label_lookup_.at(label)));
    out.push_back(
        Neighbor{.label = static_cast<int64_t>(label), .similarity = DotElement(query, element)});
  }
  std::sort(out.begin(), out.end(), [](const Neighbor& a, const Neighbor& b) {
    return a.similarity != b.similarity ? a.similarity > b.similarity : a.label < b.label;
  });
  return out;
}

size_t HnswIndex::size() const {
  RoomLock::Hold searching(lock_, kSearches);
  return graph_->cur_element_count;
}

}  // namespace strata::vector
