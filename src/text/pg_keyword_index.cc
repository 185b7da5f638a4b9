#include "text/pg_keyword_index.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <tuple>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "pg/schema.h"
#include "text/bm25.h"
#include "text/tokenizer.h"
#include "util/id_map.h"
#include "util/status_macros.h"
#include "util/sv.h"

namespace strata::text {
namespace {

constexpr int64_t kNoLowerBound = std::numeric_limits<int64_t>::min();
constexpr int64_t kNoUpperBound = std::numeric_limits<int64_t>::max();

// The last character (U+10FFFF, a noncharacter no token holds): a prefix followed by it ends
// the range of the terms that begin with the prefix, compared byte by byte (COLLATE "C").
constexpr std::string_view kLastCharacter = "\xF4\x8F\xBF\xBF";

// A sum of document counts where kNoUpperBound (a saturated count) makes the sum unknown.
int64_t AddDocuments(int64_t a, int64_t b) {
  return a == kNoUpperBound || b == kNoUpperBound ? kNoUpperBound : a + b;
}

// The statistics' upkeep, the end of a statement that begins with WITH (and its own CTEs):
// documents ?p+2 each for the (term ?p, field ?p+1) rows of text_term_stats, up to
// kSaturatedDocuments; documents ?p+4 and tokens ?p+5 for text_totals' fields ?p+3. Empty
// arrays change nothing; nothing either when `only_if` (a condition, or empty) is false.
std::string CountSql(int p, std::string_view only_if = "") {
  const std::string where = only_if.empty() ? "" : " WHERE " + std::string(only_if);
  return absl::StrCat(
      "stats AS (INSERT INTO text_term_stats (term, field, documents) "
      "SELECT term, field, LEAST(n, ", kSaturatedDocuments, ") FROM unnest(CAST(?", p,
      " AS text[]), CAST(?", p + 1, " AS smallint[]), CAST(?", p + 2,
      " AS bigint[])) AS c (term, field, n)", where,
      " ON CONFLICT (term, field) DO UPDATE SET documents = "
      "LEAST(text_term_stats.documents + excluded.documents, ", kSaturatedDocuments,
      ") WHERE text_term_stats.documents < ", kSaturatedDocuments,
      ") INSERT INTO text_totals (field, documents, tokens) SELECT * FROM unnest(CAST(?",
      p + 3, " AS smallint[]), CAST(?", p + 4, " AS bigint[]), CAST(?", p + 5,
      " AS bigint[]))", where,
      " ON CONFLICT (field) DO UPDATE SET documents = text_totals.documents + "
      "excluded.documents, tokens = text_totals.tokens + excluded.tokens");
}

// How often Add asks which of its terms' statistics rows are saturated.
constexpr int64_t kLearnEvery = 64;

// AddBeside's statements sent before their rows are read (a group commit's are at most 16).
constexpr size_t kSentTogether = 16;

// A row term: a (field, term) pair as text_documents.terms holds it and PgKeywordIndex's
// saturated_ keys it, the field's digit, then the term. RowTermSql writes it in SQL;
// RowTermFieldSql and RowTermTermSql read it back.
std::string RowTerm(int field, std::string_view term) {
  std::string key(1, static_cast<char>('0' + field));
  key.append(term);
  return key;
}

std::string RowTermSql(const char* field, const char* term) {
  return absl::StrCat("CAST(", field, " AS text) || ", term);
}

std::string RowTermFieldSql(const char* key) {
  return absl::StrCat("CAST(left(", key, ", 1) AS smallint)");
}

std::string RowTermTermSql(const char* key) { return absl::StrCat("substr(", key, ", 2)"); }

// The row terms of `terms` in every field.
std::vector<std::string> RowTermsOf(const std::vector<std::string>& terms) {
  std::vector<std::string> keys;
  for (const std::string& term : terms) {
    for (int f = 0; f < kFields; ++f) keys.push_back(RowTerm(f, term));
  }
  return keys;
}

std::string_view StoredTerm(std::string_view term) {
  if (term.size() <= kMaxStoredTermBytes) return term;
  size_t length = kMaxStoredTermBytes;
  while (length > 0 && (static_cast<unsigned char>(term[length]) & 0xC0) == 0x80) --length;
  return term.substr(0, length);
}

// A PostgreSQL array literal of `values`, each quoted.
template <typename Range>
std::string ArrayLiteral(const Range& values) {
  std::string out = "{";
  for (const auto& value : values) {
    if (out.size() > 1) out += ',';
    out += '"';
    for (char c : std::string_view(value)) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  out += '}';
  return out;
}

// A PostgreSQL array literal of integers.
template <typename Range>
std::string IntArrayLiteral(const Range& values) {
  std::string out = "{";
  for (const auto v : values) absl::StrAppend(&out, out.size() > 1 ? "," : "", v);
  out += '}';
  return out;
}

// What CountSql adds to the statistics: documents by (term, field), and by field the
// documents and their tokens.
struct Counts {
  std::vector<std::string_view> terms;
  std::vector<int64_t> fields, documents;
  std::vector<int64_t> totals_fields, totals_documents, totals_tokens;
};

// Binds `counts` to CountSql(p)'s parameters.
void BindCounts(store::Stmt& s, int p, const Counts& counts) {
  s.Bind(p, ArrayLiteral(counts.terms))
      .Bind(p + 1, IntArrayLiteral(counts.fields))
      .Bind(p + 2, IntArrayLiteral(counts.documents))
      .Bind(p + 3, IntArrayLiteral(counts.totals_fields))
      .Bind(p + 4, IntArrayLiteral(counts.totals_documents))
      .Bind(p + 5, IntArrayLiteral(counts.totals_tokens));
}

// Calls fn(n) for each integer of an array as PostgreSQL writes it ("{0,3,7}"), or of a list
// ("0,3,7").
template <typename Fn>
void ForEachInt(std::string_view text, Fn fn) {
  const char* p = text.data();
  const char* end = text.data() + text.size();
  while (p < end) {
    if (*p == '-' || (*p >= '0' && *p <= '9')) {
      int32_t v = 0;
      p = std::from_chars(p, end, v).ptr;
      fn(v);
    } else {
      ++p;
    }
  }
}

// A term's positions in a field. A term stands a few times in most fields: held in place,
// since a common term's read is a posting for every version (at 100K memories an allocation
// each was a tenth of a ranking's time).
using Positions = absl::InlinedVector<int32_t, 6>;

Positions ParsePositions(std::string_view text) {
  Positions out;
  ForEachInt(text, [&](int32_t v) { out.push_back(v); });
  return out;
}

// The sum of the integers of an array or list (ForEachInt): a row's tokens from its lengths.
int64_t SumInts(std::string_view text) {
  int64_t sum = 0;
  ForEachInt(text, [&](int32_t v) { sum += v; });
  return sum;
}

// Calls fn(element) for each element of a text array as PostgreSQL writes it, {a,"b c","d\"e"}
// (none NULL): a view into `text`, or into a scratch string for a quoted one.
template <typename Fn>
void ForEachElement(std::string_view text, Fn fn) {
  std::string quoted;
  size_t i = text.empty() || text[0] != '{' ? 0 : 1;
  while (i < text.size() && text[i] != '}') {
    if (text[i] == '"') {
      quoted.clear();
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\' && i + 1 < text.size()) ++i;
        quoted += text[i];
      }
      ++i;  // The closing quote.
      fn(std::string_view(quoted));
    } else {
      const size_t end = std::min(text.find_first_of(",}", i), text.size());
      fn(text.substr(i, end - i));
      i = end;
    }
    if (i < text.size() && text[i] == ',') ++i;
  }
}

// text_documents.positions: each of the row's terms' positions, in the order of its terms,
// comma-separated, apart by ';' ("0,5;3;1,2,9"). Appends one term's (never none).
void AppendPositions(const std::vector<int32_t>& at, std::string& out) {
  if (!out.empty()) out += ';';
  for (size_t i = 0; i < at.size(); ++i) absl::StrAppend(&out, i == 0 ? "" : ",", at[i]);
}

// Calls fn(key, at) for each of a text_documents row's terms (`terms` as PostgreSQL writes the
// array) with that term's positions (`at`, cut from the row's `positions`).
template <typename Fn>
void ForEachRowTerm(std::string_view terms, std::string_view positions, Fn fn) {
  ForEachElement(terms, [&](std::string_view key) {
    const size_t end = std::min(positions.find(';'), positions.size());
    const std::string_view at = positions.substr(0, end);
    positions.remove_prefix(std::min(end + 1, positions.size()));
    fn(key, at);
  });
}

// A segment's postings and a block's lengths (PgKeywordIndex::BuildSegments): entries apart by
// ';', each a version's offset from the block's first, ':', then its value (positions as
// AppendPositions writes them, or tokens). Calls fn(offset, value) for each.
// One pass, byte by byte: a common term's read is ~100,000 short entries, where a search for
// each delimiter and a conversion call each cost more than the bytes (a fifth of a node's
// CPU in such a query).
template <typename Fn>
void ForEachEntry(std::string_view list, Fn fn) {
  const char* p = list.data();
  const char* const end = p + list.size();
  while (p < end) {
    int64_t offset = 0;
    for (; p < end && *p != ':' && *p != ';'; ++p) offset = offset * 10 + (*p - '0');
    if (p < end && *p == ':') ++p;
    const char* const value = p;
    while (p < end && *p != ';') ++p;
    fn(offset, std::string_view(value, p - value));
    if (p < end) ++p;  // The ';'.
  }
}

// ---------------------------------------------------------------------------------------------
// Documents

// A field's terms with their positions, as FTS5 indexes a column: a token takes the next
// position unless it is colocated (an alternative at its predecessor's); the field's length
// is the count of positions.
struct FieldTerms {
  absl::flat_hash_map<std::string, std::vector<int32_t>> positions;
  int32_t length = 0;
};

FieldTerms FieldTermsOf(std::string_view value) {
  FieldTerms field;
  Tokenize(value, TokenizeMode::kDocument, [&field](const Token& token) {
    if (!token.colocated || field.length == 0) ++field.length;
    std::vector<int32_t>& at = field.positions[std::string(StoredTerm(token.term))];
    if (at.empty() || at.back() != field.length - 1) at.push_back(field.length - 1);
    return true;
  });
  return field;
}

// ---------------------------------------------------------------------------------------------
// Queries

// One position of a phrase: any of `terms` (colocated query tokens are alternatives), or,
// when `prefix`, any term beginning with one of them.
struct QueryToken {
  std::vector<std::string> terms;
  bool prefix = false;
};
using PhraseTokens = std::vector<QueryToken>;

// `text` cut as FTS5 cuts a quoted string of a MATCH expression with the strata tokenizer:
// query mode (prefix mode for `"..." *`, whose last token alone is a prefix). No tokens: the
// phrase matches nothing.
PhraseTokens TokensOf(std::string_view text, bool prefix) {
  PhraseTokens phrase;
  Tokenize(text, prefix ? TokenizeMode::kPrefixQuery : TokenizeMode::kQuery,
           [&phrase](const Token& token) {
             if (!token.colocated || phrase.empty()) phrase.emplace_back();
             // Languages that stem a word alike give the same term: an alternative once.
             std::vector<std::string>& terms = phrase.back().terms;
             const std::string_view term = StoredTerm(token.term);
             if (std::find(terms.begin(), terms.end(), term) == terms.end()) {
               terms.emplace_back(term);
             }
             return true;
           });
  if (prefix && !phrase.empty()) phrase.back().prefix = true;
  return phrase;
}

// `match`'s terms and phrases in KeywordMatch order.
std::vector<PhraseTokens> PhrasesOf(const KeywordMatch& match) {
  std::vector<PhraseTokens> phrases;
  for (const std::string& term : match.terms) phrases.push_back(TokensOf(term, false));
  for (const QueryPhrase& phrase : match.phrases) {
    phrases.push_back(TokensOf(phrase.text, phrase.prefix));
  }
  return phrases;
}

// Whether every phrase is one exact token: then a version matches when it holds any of their
// terms, which SQL can tell without positions.
bool AllSingleTerms(const std::vector<PhraseTokens>& phrases) {
  return std::all_of(phrases.begin(), phrases.end(), [](const PhraseTokens& p) {
    return p.size() <= 1 && (p.empty() || !p[0].prefix);
  });
}

std::vector<std::string> TermsOf(const std::vector<PhraseTokens>& phrases, bool prefix) {
  std::vector<std::string> terms;
  for (const PhraseTokens& phrase : phrases) {
    for (const QueryToken& token : phrase) {
      if (token.prefix != prefix) continue;
      terms.insert(terms.end(), token.terms.begin(), token.terms.end());
    }
  }
  std::sort(terms.begin(), terms.end());
  terms.erase(std::unique(terms.begin(), terms.end()), terms.end());
  return terms;
}

struct Posting {
  int64_t version_id;
  int field;
  Positions positions;
};

// What a query reads: the postings by term for exact tokens, by prefix for prefix tokens;
// the length (tokens in all fields) of each version they are in; FTS5's totals.
struct Postings {
  absl::flat_hash_map<std::string, std::vector<Posting>> exact;
  absl::flat_hash_map<std::string, std::vector<Posting>> prefixed;
  util::IdMap<int64_t, -1> lengths;  // By version id, over the range of those read.
  int64_t rows = 0;                  // Indexed versions.
  int64_t tokens = 0;                // In all of them, all fields.

  // A map by version id, or by a version's field (FieldKey), for the versions read.
  template <typename Map>
  Map ByVersion() const {
    return Map(lengths.low(), lengths.high(), lengths.size());
  }
  template <typename Map>
  Map ByField(size_t count) const {
    return Map(lengths.low() * kFields, lengths.high() * kFields + kFields - 1, count);
  }
};

// Version id and field.
using FieldOf = std::pair<int64_t, int>;

// A version's field as one integer, for Postings::ByField's maps.
int64_t FieldKey(FieldOf field) { return field.first * kFields + field.second; }

}  // namespace

absl::Status PgKeywordIndex::Add(int64_t version_id, std::string_view text, std::string_view key,
                                 std::string_view category) {
  return AddRows(version_id, text, key, category, nullptr).status();
}

absl::StatusOr<store::Stmt> PgKeywordIndex::AddRows(int64_t version_id, std::string_view text,
                                                    std::string_view key,
                                                    std::string_view category, Beside* beside) {
  const bool if_stored = beside != nullptr;
  std::vector<std::string> keys;  // The row's terms (RowTerm).
  std::string positions;          // AppendPositions'.
  std::vector<int64_t> lengths;
  const std::string_view values[kFields] = {text, key, category};  // FTS5's columns, in order.
  for (int f = 0; f < kFields; ++f) {
    const FieldTerms field = FieldTermsOf(values[f]);
    lengths.push_back(field.length);
    for (const auto& [term, at] : field.positions) {
      keys.push_back(RowTerm(f, term));
      AppendPositions(at, positions);
    }
  }
  if (adds_++ % kLearnEvery == 0) RETURN_IF_ERROR(LearnSaturated(keys));
  // The statistics' rows to count this version in (a saturated one stays as it is): now, with
  // its postings, for the transaction's first version and for each beside the writers (which
  // counts only if it writes); at COMMIT for the later ones. A row a transaction updates again
  // is reached through every version it had in it: a remember_batch of 2,000 took 9 ms an
  // item, 2 ms at 250.
  Counts counted;
  const bool counts_now = !pending_ || if_stored;
  if (!pending_) {
    db_->OnCommit(this);
    pending_.emplace();
  }
  if (credits_.size() > kMaxCreditKeys) credits_.clear();  // Unused credits only overcount.
  for (const std::string& row_term : keys) {
    if (saturated_.contains(row_term)) continue;
    // A credit left by an earlier reservation counts this version already.
    if (const auto credit = credits_.find(row_term); credit != credits_.end()) {
      if (--credit->second == 0) credits_.erase(credit);
      continue;
    }
    // Beside the writers, a reservation: this version and kReservedDocuments - 1 to come;
    // one per key in a round trip.
    const bool reserve = if_stored && beside->reserving->insert(row_term).second;
    const int64_t count = reserve ? kReservedDocuments : 1;
    if (reserve) beside->reserved.push_back(row_term);
    const int field = row_term[0] - '0';
    const std::string_view term = std::string_view(row_term).substr(1);
    if (counts_now) {
      counted.terms.push_back(term);
      counted.fields.push_back(field);
      counted.documents.push_back(count);
    } else {
      pending_->documents[{field, std::string(term)}] += count;
    }
  }
  for (int f = 0; f < kFields; ++f) {
    if (counts_now) {
      counted.totals_fields.push_back(f);
      counted.totals_documents.push_back(1);
      counted.totals_tokens.push_back(lengths[f]);
    } else {
      ++pending_->field_documents[f];
      pending_->field_tokens[f] += lengths[f];
    }
  }
  // A saturated row is left as it is: no new row version, which made the statistics 0.22 of a
  // write's 0.73 ms of server CPU (this statement, BEGIN and COMMIT) at 20,000 memories of
  // Perseus Vault's corpus, and 0.07 saturated; and no row lock either when known saturated
  // here. Everything hangs on the document's row: written only when the version has none
  // (AddBeside: another node's catch-up may be indexing it too) and, `if_stored`, while it
  // exists (a purge may have come first); and first, which orders this statement's row locks
  // after it: that row, text_totals' (the main statement), then the others'. Two statements
  // of this shape beside each other therefore take turns at text_totals holding no other
  // statistics row, and never deadlock.
  ASSIGN_OR_RETURN(
      store::Stmt s,
      db_->Prepare(absl::StrCat(
          if_stored ? absl::StrCat("/* beside ", beside->slot, " */ ") : "",
          "WITH document AS (INSERT INTO text_documents (version_id, lengths, terms, positions) "
          "SELECT CAST(?1 AS bigint), CAST(?4 AS integer[]), CAST(?2 AS text[]), CAST(?3 AS text) ",
          if_stored ? "WHERE EXISTS (SELECT 1 FROM versions WHERE id = CAST(?1 AS bigint)) " : "",
          "ON CONFLICT (version_id) DO NOTHING RETURNING version_id), ",
          CountSql(5, "EXISTS (SELECT 1 FROM document)"), " RETURNING field"),
      store::Plan::kOnce));
  s.Bind(1, version_id)
      .Bind(2, ArrayLiteral(keys))
      .Bind(3, positions)
      .Bind(4, IntArrayLiteral(lengths));
  BindCounts(s, 5, counted);
  // Beside the writers, its rows (text_totals', only when it wrote) are read after COMMIT.
  RETURN_IF_ERROR(if_stored ? s.Send() : s.RunLater());
  return s;
}

absl::Status PgKeywordIndex::BeforeCommit() {
  if (!pending_) return absl::OkStatus();
  const PendingKeywordStatistics pending = *std::move(pending_);
  pending_.reset();
  Counts counts;
  for (const auto& [row, count] : pending.documents) {
    counts.fields.push_back(row.first);
    counts.terms.push_back(row.second);
    counts.documents.push_back(count);
  }
  for (int f = 0; f < kFields; ++f) {
    if (pending.field_documents[f] == 0) continue;
    counts.totals_fields.push_back(f);
    counts.totals_documents.push_back(pending.field_documents[f]);
    counts.totals_tokens.push_back(pending.field_tokens[f]);
  }
  if (counts.terms.empty() && counts.totals_fields.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(store::Stmt s,
                   db_->Prepare(absl::StrCat("WITH ", CountSql(1)), store::Plan::kOnce));
  BindCounts(s, 1, counts);
  return s.RunLater();
}

void PgKeywordIndex::Dropped() { pending_.reset(); }

PgKeywordIndex::~PgKeywordIndex() {
  if (!pending_) return;
  db_->ForgetCommitHook(this);
  // A failure to send fails the connection, and with it the COMMIT.
  BeforeCommit().IgnoreError();
}

absl::Status PgKeywordIndex::LearnSaturated(const std::vector<std::string>& keys) {
  std::vector<std::string_view> terms;
  std::vector<std::string> fields;
  for (const std::string& key : keys) {
    if (saturated_.contains(key)) continue;
    fields.push_back(key.substr(0, 1));
    terms.push_back(std::string_view(key).substr(1));
  }
  if (terms.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(
      store::Stmt s,
      db_->Prepare(absl::StrCat(
          "SELECT s.field, s.term FROM unnest(CAST(?1 AS text[]), CAST(?2 AS smallint[])) "
          "AS u (term, field) JOIN text_term_stats AS s ON s.term = u.term "
          "AND s.field = u.field WHERE s.documents >= ",
          kSaturatedDocuments)));
  s.Bind(1, ArrayLiteral(terms)).Bind(2, ArrayLiteral(fields));
  while (true) {
    ASSIGN_OR_RETURN(const bool row, s.Step());
    if (!row) break;
    saturated_.insert(RowTerm(static_cast<int>(s.Int(0)), s.Text(1)));
  }
  return absl::OkStatus();
}

absl::Status PgKeywordIndex::AddBeside(std::span<const KeywordDocument> documents) {
  if (documents.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(store::Transaction txn, store::Transaction::BeginBeside(*db_));
  static const std::string kShared =
      absl::StrCat("SELECT pg_advisory_xact_lock_shared(", pg::kKeywordLock, ")");
  ASSIGN_OR_RETURN(store::Stmt lock, db_->Prepare(kShared));
  RETURN_IF_ERROR(lock.RunLater());
  // The reservations are credits once known written: the statement writes nothing (and
  // returns no row) for a version indexed already or purged, and a credit nobody reserved
  // would count a later version nowhere. So up to kSentTogether documents' statements are
  // sent (each a cached statement of its own) and then read together, in one round trip,
  // the last of them with COMMIT; a key one of them reserved is counted by the later ones
  // for their own version alone. Credits granted in a transaction that does not commit
  // counted nothing: all are dropped then (which only overcounts).
  bool committed = false;
  const absl::Cleanup drop_credits = [&] {
    if (!committed) credits_.clear();
  };
  for (size_t start = 0; start < documents.size(); start += kSentTogether) {
    const size_t end = std::min(documents.size(), start + kSentTogether);
    absl::flat_hash_set<std::string> reserving;
    std::vector<Beside> besides(end - start);
    std::vector<store::Stmt> statements;
    for (size_t i = start; i < end; ++i) {
      const KeywordDocument& d = documents[i];
      Beside& beside = besides[i - start];
      beside.slot = static_cast<int>(i - start);
      beside.reserving = &reserving;
      ASSIGN_OR_RETURN(store::Stmt rows,
                       AddRows(d.version_id, d.text, d.key, d.category, &beside));
      statements.push_back(std::move(rows));
    }
    if (end == documents.size()) {
      RETURN_IF_ERROR(txn.Commit());
      committed = true;
    }
    for (size_t k = 0; k < statements.size(); ++k) {
      // Its rows: one for each text_totals row, when it wrote.
      ASSIGN_OR_RETURN(const std::vector<int64_t> written, statements[k].Ints());
      if (written.empty()) continue;
      for (std::string& reservation : besides[k].reserved) {
        credits_[std::move(reservation)] = kReservedDocuments - 1;
      }
    }
  }
  return absl::OkStatus();
}

namespace {

// The last part of a statement (after WITH, or a CTE and a comma) that drops the segment block
// holding version ?1 and the block's segments.
constexpr char kDropBlockHolding[] =
    "block AS (DELETE FROM text_segment_blocks WHERE first_version <= CAST(?1 AS bigint) "
    "AND last_version >= CAST(?1 AS bigint) RETURNING first_version) "
    "DELETE FROM text_segments AS g USING block AS b WHERE g.first_version = b.first_version";

}  // namespace

absl::Status PgKeywordIndex::Remove(int64_t version_id) {
  // Waits for the keyword rows being written beside the writers (AddBeside), and keeps new
  // ones out until this transaction ends, when the version is gone.
  static const std::string kExclusive =
      absl::StrCat("SELECT pg_advisory_xact_lock(", pg::kKeywordLock, ")");
  ASSIGN_OR_RETURN(store::Stmt lock, db_->Prepare(kExclusive));
  RETURN_IF_ERROR(lock.RunLater());
  // The row says its terms. The segments of its block go with it (built again without it).
  ASSIGN_OR_RETURN(
      store::Stmt s,
      db_->Prepare(absl::StrCat(
          "WITH document AS (DELETE FROM text_documents WHERE version_id = CAST(?1 AS bigint) "
          "RETURNING lengths, terms), "
          "stats AS (UPDATE text_term_stats AS s SET documents = s.documents - 1 "
          "FROM document AS d, unnest(d.terms) AS k (key) "
          "WHERE s.term = ",
          RowTermTermSql("k.key"), " AND s.field = ", RowTermFieldSql("k.key"),
          " AND s.documents < ", kSaturatedDocuments,
          "), totals AS (UPDATE text_totals AS t SET documents = t.documents - 1, "
          "tokens = t.tokens - d.lengths[t.field + 1] FROM document AS d), ",
          kDropBlockHolding)));
  s.Bind(1, version_id);
  return s.Run();
}

absl::StatusOr<int> PgKeywordIndex::BuildSegments(store::Db& db, const SegmentOptions& options,
                                                  int max_blocks) {
  int built = 0;
  while (built < max_blocks) {
    ASSIGN_OR_RETURN(store::Transaction txn, store::Transaction::BeginBeside(db));
    // Shared, as the writers' keyword rows: a purge (Remove) waits for this block, then drops
    // it, or this waits for the purge and reads the block without its version.
    ASSIGN_OR_RETURN(
        store::Stmt lock,
        db.Prepare(absl::StrCat("SELECT pg_advisory_xact_lock_shared(", pg::kKeywordLock,
                                "), pg_try_advisory_xact_lock(", pg::kSegmentLock, ")")));
    ASSIGN_OR_RETURN(const bool row, lock.Step());
    if (!row || lock.Text(1) != "t") return built;  // Another node is building.
    // The next block: the first after the blocks from version 1 on (a purged one's hole, or
    // past the last), and whether a later version exists, which makes it final. Else, when
    // no new block was built, the first block holding fewer row terms than the newest: built
    // before a term saturated, it is built again with that term's segment.
    ASSIGN_OR_RETURN(
        store::Stmt next,
        db.Prepare("SELECT CASE WHEN EXISTS (SELECT 1 FROM text_segment_blocks "
                   "WHERE first_version = 1) THEN (SELECT min(b.last_version) "
                   "FROM text_segment_blocks AS b WHERE NOT EXISTS (SELECT 1 FROM "
                   "text_segment_blocks AS n WHERE n.first_version = b.last_version + 1)) "
                   "ELSE 0 END, (SELECT coalesce(max(id), 0) FROM versions), o.first_version, "
                   "o.held FROM (SELECT 1) AS one LEFT JOIN (SELECT first_version, "
                   "cardinality(terms) AS held FROM text_segment_blocks WHERE cardinality(terms) "
                   "< (SELECT cardinality(terms) FROM text_segment_blocks ORDER BY "
                   "first_version DESC LIMIT 1) ORDER BY first_version LIMIT 1) AS o ON true"));
    ASSIGN_OR_RETURN(const bool found, next.Step());
    if (!found) return built;
    // None before the store holds twice min_documents versions: until then a term can have
    // a segment in a few blocks only, and most would be built again as terms saturate.
    if (next.Int(1) < 2 * options.min_documents) return built;
    int64_t first = next.Int(0) + 1;
    std::optional<int64_t> held;  // Rebuilding: the row terms the block holds.
    if (next.Int(1) <= first + options.block_versions - 1) {
      // One a call, and not while new blocks come: a load from empty saturates terms one
      // after another.
      if (next.IsNull(2) || built > 0) return built;
      first = next.Int(2);
      held = next.Int(3);
    }
    const int64_t last = first + options.block_versions - 1;
    // Its rows, the number of its versions (a row each once all are indexed) and the newest
    // block's row terms (saturated for good), in one snapshot.
    ASSIGN_OR_RETURN(
        store::Stmt read,
        db.Prepare("SELECT version_id, CAST(terms AS text), positions, CAST(lengths AS text) "
                   "FROM text_documents WHERE version_id >= ?1 AND version_id <= ?2 "
                   "UNION ALL SELECT NULL, CAST((SELECT count(*) FROM versions WHERE id >= ?1 "
                   "AND id <= ?2) AS text), coalesce((SELECT CAST(terms AS text) FROM "
                   "text_segment_blocks ORDER BY first_version DESC LIMIT 1), '{}'), NULL"));
    read.Bind(1, first).Bind(2, last);
    std::vector<std::pair<std::string, std::string>> segments;  // Row term, postings.
    absl::flat_hash_map<std::string, size_t> segment_of;        // Row term -> in segments.
    absl::flat_hash_map<std::string, int64_t> in_block;         // Row term -> its versions.
    std::string newest, lengths;
    int64_t rows = 0, versions = -1;
    std::vector<std::tuple<int64_t, std::string, std::string>> documents;
    while (true) {
      ASSIGN_OR_RETURN(const bool more, read.Step());
      if (!more) break;
      if (read.IsNull(0)) {
        versions = std::stoll(std::string(read.Text(1)));
        newest = std::string(read.Text(2));
        continue;
      }
      ++rows;
      const int64_t offset = read.Int(0) - first;
      absl::StrAppend(&lengths, lengths.empty() ? "" : ";", offset, ":", SumInts(read.Text(3)));
      ForEachElement(read.Text(1), [&](std::string_view key) { ++in_block[ToAbsl(key)]; });
      documents.emplace_back(offset, std::string(read.Text(1)), std::string(read.Text(2)));
    }
    if (rows != versions) return built;  // Not all indexed yet: a catch-up will.
    // The row terms to hold segments for: the newest block's, and those of its own terms in a
    // sixteenth of it or more saturated since, looked up by key (a scan of the statistics, a
    // row for every term indexed, would grow with the store; a rarer one is read from its
    // rows in this block, which are few).
    std::vector<std::string> terms;
    ForEachElement(newest, [&](std::string_view key) { terms.emplace_back(key); });
    std::vector<std::string_view> candidates, fields;
    for (const auto& [key, count] : in_block) {
      if (count * 16 < options.block_versions || key.empty()) continue;
      if (std::find(terms.begin(), terms.end(), key) != terms.end()) continue;
      candidates.push_back(std::string_view(key).substr(1));
      fields.push_back(std::string_view(key).substr(0, 1));
    }
    if (!candidates.empty()) {
      ASSIGN_OR_RETURN(
          store::Stmt saturated,
          db.Prepare("SELECT s.field, s.term FROM unnest(CAST(?1 AS text[]), CAST(?2 AS "
                     "smallint[])) AS u (term, field) JOIN text_term_stats AS s ON s.term = "
                     "u.term AND s.field = u.field WHERE s.documents >= ?3"));
      saturated.Bind(1, ArrayLiteral(candidates))
          .Bind(2, ArrayLiteral(fields))
          .Bind(3, options.min_documents);
      while (true) {
        ASSIGN_OR_RETURN(const bool more, saturated.Step());
        if (!more) break;
        terms.push_back(RowTerm(static_cast<int>(saturated.Int(0)), saturated.Text(1)));
      }
    }
    std::sort(terms.begin(), terms.end());
    for (const std::string& key : terms) {
      segment_of.emplace(key, segment_of.size());
      segments.emplace_back(key, std::string());
    }
    if (held) {
      // Only for more terms than it holds (with purges, a lower min_documents may hold fewer).
      if (static_cast<int64_t>(segments.size()) <= *held) return built;
      ASSIGN_OR_RETURN(store::Stmt drop, db.Prepare(absl::StrCat("WITH ", kDropBlockHolding)));
      drop.Bind(1, first);
      RETURN_IF_ERROR(drop.RunLater());
    }
    for (const auto& [document_offset, keys, positions_text] : documents) {
      const int64_t offset = document_offset;  // Not a binding: the lambda captures it.
      ForEachRowTerm(keys, positions_text, [&](std::string_view key, std::string_view at) {
        const auto it = segment_of.find(ToAbsl(key));
        if (it == segment_of.end()) return;
        std::string& postings = segments[it->second].second;
        absl::StrAppend(&postings, postings.empty() ? "" : ";", offset, ":", ToAbsl(at));
      });
    }
    std::vector<std::string_view> keys, postings;
    for (const auto& [key, list] : segments) {
      if (list.empty()) continue;
      keys.push_back(key);
      postings.push_back(list);
    }
    ASSIGN_OR_RETURN(
        store::Stmt insert,
        db.Prepare("WITH block AS (INSERT INTO text_segment_blocks (first_version, "
                   "last_version, terms, lengths) VALUES (?1, ?2, CAST(?3 AS text[]), ?4) "
                   "ON CONFLICT (first_version) DO NOTHING RETURNING first_version) "
                   "INSERT INTO text_segments (term, first_version, postings) "
                   "SELECT u.term, b.first_version, u.postings FROM block AS b, "
                   "unnest(CAST(?5 AS text[]), CAST(?6 AS text[])) AS u (term, postings)"));
    insert.Bind(1, first).Bind(2, last).Bind(3, ArrayLiteral(terms)).Bind(4, lengths);
    insert.Bind(5, ArrayLiteral(keys)).Bind(6, ArrayLiteral(postings));
    RETURN_IF_ERROR(insert.Run());
    RETURN_IF_ERROR(txn.Commit());
    ++built;
  }
  return built;
}

absl::Status PgKeywordIndex::MergePending(store::Db& db) {
  // The index of schema migration 7, its list's limit migration 8's.
  return db.Exec("SELECT gin_clean_pending_list('text_documents_terms')");
}

absl::StatusOr<const absl::flat_hash_set<std::string>*> PgKeywordIndex::SegmentTerms() {
  const auto now = std::chrono::steady_clock::now();
  if (segment_terms_at_ && now - *segment_terms_at_ < kSegmentTermsFor) return &segment_terms_;
  ASSIGN_OR_RETURN(store::Stmt s, db_->Prepare("SELECT CAST(terms AS text) FROM "
                                               "text_segment_blocks ORDER BY first_version "
                                               "DESC LIMIT 1"));
  ASSIGN_OR_RETURN(const bool row, s.Step());
  segment_terms_.clear();
  if (row) ForEachElement(s.Text(0), [&](std::string_view key) { segment_terms_.emplace(key); });
  segment_terms_at_ = now;
  return &segment_terms_;
}

namespace {

// Which exact terms of `phrases` a query may read restricted, and what decides it. A phrase
// of several tokens holds in a version only where its rarest token does (its "anchor"), so
// the other tokens' terms need be read only in the versions some term read whole is in: on
// Perseus Vault's corpus the phrase "entity 123" read every version's postings of "entity"
// (100 ms a recall at 5,000 memories) for the ~5 versions holding "123". Read whole are single
// tokens (each a query item of its own), prefixes (a range) and each phrase's anchor, which
// text_term_stats tells in the postings statement itself: `positions` lists every position of
// a phrase of several tokens (its number, its position, a term of it; "" for a prefix, which
// counts as none, being read whole anyway). A phrase whose terms all have segments (in
// `segmented`, RestrictionsOf's) is read whole too, from them: a common term's anchor would
// be a row for most versions.
struct Restrictions {
  absl::flat_hash_set<std::string> candidates;  // Restricted unless at some phrase's anchor.
  std::vector<int64_t> phrase_of, position_of;
  std::vector<std::string> term_of;
};

Restrictions RestrictionsOf(const std::vector<PhraseTokens>& phrases,
                            const absl::flat_hash_set<std::string>& segmented) {
  Restrictions out;
  absl::flat_hash_set<std::string> whole;
  for (size_t p = 0; p < phrases.size(); ++p) {
    const PhraseTokens& phrase = phrases[p];
    const bool from_segments =
        std::all_of(phrase.begin(), phrase.end(), [&](const QueryToken& token) {
          return !token.prefix &&
                 std::all_of(token.terms.begin(), token.terms.end(),
                             [&](const std::string& term) { return segmented.contains(term); });
        });
    for (size_t k = 0; k < phrase.size(); ++k) {
      const QueryToken& token = phrase[k];
      if (phrase.size() < 2 || token.prefix || from_segments) {
        whole.insert(token.terms.begin(), token.terms.end());
      } else {
        out.candidates.insert(token.terms.begin(), token.terms.end());
      }
      if (phrase.size() < 2 || from_segments) continue;
      const std::vector<std::string> prefix_position = {""};
      for (const std::string& term : token.prefix ? prefix_position : token.terms) {
        out.phrase_of.push_back(static_cast<int64_t>(p));
        out.position_of.push_back(static_cast<int64_t>(k));
        out.term_of.push_back(term);
      }
    }
  }
  for (const std::string& term : whole) out.candidates.erase(term);
  return out;
}

// The row terms of the `exact` terms a query reads whole: those `restrictions` leave.
std::vector<std::string> WholeRowTerms(const std::vector<std::string>& exact,
                                       const Restrictions& restrictions) {
  std::vector<std::string> whole;
  for (const std::string& term : exact) {
    if (!restrictions.candidates.contains(term)) whole.push_back(term);
  }
  return RowTermsOf(whole);
}

// The blocks of segments a query reads (PgKeywordIndex::BuildSegments), and which of its row
// terms each holds segments for.
struct SegmentPlan {
  struct Block {
    int64_t first = 0, last = 0;
    absl::flat_hash_set<std::string> terms;  // Of the query's.
  };
  std::vector<Block> blocks;       // From version 1 on, one after another.
  std::vector<std::string> terms;  // The query's row terms some block holds segments for.
  std::vector<int64_t> lacking_first, lacking_last;  // The blocks lacking one of them.

  int64_t covered() const { return blocks.empty() ? 0 : blocks.back().last; }

  // The terms (no field) of `terms`.
  absl::flat_hash_set<std::string> WholeTerms() const {
    absl::flat_hash_set<std::string> whole;
    for (const std::string& key : terms) whole.insert(key.substr(1));
    return whole;
  }

  // Whether the postings of row term `key` in version `version_id` come from a segment.
  bool FromSegment(int64_t version_id, std::string_view key) const {
    if (version_id < 1 || version_id > covered()) return false;
    const auto after =
        std::upper_bound(blocks.begin(), blocks.end(), version_id,
                         [](int64_t id, const Block& block) { return id < block.first; });
    return std::prev(after)->terms.contains(ToAbsl(key));
  }
};

// The blocks from version 1 on and which of `candidates` (row terms) each holds segments for.
absl::StatusOr<SegmentPlan> PlanSegments(store::Db& db,
                                         const std::vector<std::string>& candidates) {
  ASSIGN_OR_RETURN(
      store::Stmt s,
      db.Prepare("SELECT first_version, last_version, CAST(ARRAY(SELECT k FROM unnest(terms) "
                 "AS k WHERE k = ANY(CAST(?1 AS text[]))) AS text) FROM text_segment_blocks "
                 "ORDER BY first_version"));
  s.Bind(1, ArrayLiteral(candidates));
  SegmentPlan plan;
  absl::flat_hash_set<std::string> held;
  bool contiguous = true;
  while (true) {
    ASSIGN_OR_RETURN(const bool row, s.Step());
    if (!row) break;
    contiguous = contiguous && s.Int(0) == plan.covered() + 1;
    if (!contiguous) continue;  // After a hole: read as if unbuilt.
    SegmentPlan::Block& block = plan.blocks.emplace_back();
    block.first = s.Int(0);
    block.last = s.Int(1);
    ForEachElement(s.Text(2), [&](std::string_view key) { block.terms.emplace(key); });
    held.insert(block.terms.begin(), block.terms.end());
  }
  for (const std::string& key : candidates) {
    if (held.contains(key)) plan.terms.push_back(key);
  }
  for (const SegmentPlan::Block& block : plan.blocks) {
    if (block.terms.size() == plan.terms.size()) continue;
    plan.lacking_first.push_back(block.first);
    plan.lacking_last.push_back(block.last);
  }
  return plan;
}

// Reads what a query on `phrases` needs, for versions with ids in (after, before), in one
// statement: the text_documents rows holding a term read whole (an exact term not restricted,
// a phrase's anchor, a term in a prefix's range of text_term_stats, to its last character,
// which no token holds), found by the GIN index on their terms; then the totals. Every term
// of the query, restricted ones too, is cut out of those rows here: a restricted term's
// postings are then those in the versions the others are in. GIN finds no prefix of an
// array's element, so a prefix's terms come from the statistics, which have a row for every
// term indexed (a purge leaves it, at zero).
// An exact term read whole that `segmented` names is read from its segments where a block
// holds them (`plan`), and from the rows of the versions past the blocks and in blocks
// without its segments. No postings (nullopt) when the blocks are not those `plan` found (a
// purge dropped one meanwhile, outside a transaction's snapshot).
absl::StatusOr<std::optional<Postings>> ReadPostingsOnce(store::Db& db,
                                                         const std::vector<PhraseTokens>& phrases,
                                                         int64_t after, int64_t before,
                                                         const SegmentPlan& plan) {
  const std::vector<std::string> exact = TermsOf(phrases, false);
  const std::vector<std::string> prefixes = TermsOf(phrases, true);
  const Restrictions restrictions = RestrictionsOf(phrases, plan.WholeTerms());
  std::vector<std::string> whole;  // The exact terms read whole from rows, as row terms.
  for (std::string& key : WholeRowTerms(exact, restrictions)) {
    if (std::find(plan.terms.begin(), plan.terms.end(), key) == plan.terms.end()) {
      whole.push_back(std::move(key));
    }
  }
  int parameters = 1;  // ?1: whole.
  std::string read = "CAST(?1 AS text[])";
  if (!prefixes.empty()) {
    absl::StrAppend(&read, " || ARRAY(SELECT ", RowTermSql("s.field", "s.term"),
                    " FROM unnest(CAST(?2 AS text[]), CAST(?3 AS text[])) AS r (low, high) "
                    "JOIN text_term_stats AS s ON s.term >= r.low AND s.term <= r.high)");
    parameters = 3;
  }
  const bool restricting = !restrictions.candidates.empty();
  std::string with;
  if (restricting) {
    // A phrase's anchor is its position of fewest documents (a saturated term's are unknown:
    // as many as can be), the first of them on a tie; read whole in every field.
    const int p = parameters;
    with = absl::StrCat(
        "WITH o AS (SELECT * FROM unnest(CAST(?", p + 1, " AS bigint[]), CAST(?", p + 2,
        " AS bigint[]), CAST(?", p + 3, " AS text[])) AS o (phrase, position, term)), ",
        "n AS (SELECT o.phrase, o.position, CASE WHEN bool_or(s.documents >= ",
        kSaturatedDocuments, ") THEN ", kNoUpperBound,
        " ELSE sum(coalesce(s.documents, 0)) END AS documents FROM o "
        "LEFT JOIN text_term_stats AS s ON s.term = o.term GROUP BY o.phrase, o.position), "
        "anchors AS (SELECT o.term FROM (SELECT DISTINCT ON (phrase) phrase, position FROM n "
        "ORDER BY phrase, documents, position) AS a JOIN o USING (phrase, position) "
        "WHERE o.term <> '') ");
    absl::StrAppend(&read, " || ARRAY(SELECT ", RowTermSql("f", "a.term"),
                    " FROM anchors AS a CROSS JOIN generate_series(0, ", kFields - 1, ") AS f)");
    parameters += 3;
  }
  // Only the bounds given are written: an unbounded read leaves the planner nothing to weigh
  // but the terms (a condition keeping every version id would still count in its estimates).
  std::vector<int64_t> bound_values;
  std::string bounds;
  for (const auto& [op, value, none] : {std::tuple(">", after, kNoLowerBound),
                                        std::tuple("<", before, kNoUpperBound)}) {
    if (value == none) continue;
    absl::StrAppend(&bounds, " AND version_id ", op, " ?", ++parameters);
    bound_values.push_back(value);
  }
  // Each row says what it is: 0 a version's row, 1 a field's totals, 2 a segment, 3 a block.
  constexpr char kRow[] =
      "SELECT 0, version_id, CAST(terms AS text), positions, CAST(lengths AS text) ";
  std::string sql =
      absl::StrCat(with, kRow, "FROM text_documents WHERE terms && (", read, ")", bounds);
  const bool segments = !plan.terms.empty();
  const int segmented = parameters + 1, covered = parameters + 2;
  const int lacking_first = parameters + 3, lacking_last = parameters + 4;
  if (segments) {
    const std::string holding = absl::StrCat("terms && CAST(?", segmented, " AS text[])");
    absl::StrAppend(
        &sql, " UNION ALL ", kRow, "FROM text_documents WHERE version_id > ?", covered, " AND ",
        holding, bounds, " UNION ALL ", kRow, "FROM text_documents JOIN unnest(CAST(?",
        lacking_first, " AS bigint[]), CAST(?", lacking_last,
        " AS bigint[])) AS l (low, high) ON version_id >= l.low AND version_id <= l.high WHERE ",
        holding, bounds,
        " UNION ALL SELECT 2, first_version, term, postings, NULL FROM text_segments "
        "WHERE term = ANY(CAST(?",
        segmented, " AS text[])) AND first_version <= ?", covered,
        " UNION ALL SELECT 3, first_version, CAST(last_version AS text), lengths, NULL "
        "FROM text_segment_blocks WHERE first_version <= ?",
        covered);
  }
  absl::StrAppend(&sql,
                  " UNION ALL SELECT 1, NULL, CAST(field AS text), "
                  "CAST(documents AS text), CAST(tokens AS text) FROM text_totals");
  ASSIGN_OR_RETURN(store::Stmt s, db.Prepare(sql));
  s.Bind(1, ArrayLiteral(whole));
  int next = 2;
  if (!prefixes.empty()) {
    std::vector<std::string> highs;
    for (const std::string& prefix : prefixes) highs.push_back(prefix + std::string(kLastCharacter));
    s.Bind(2, ArrayLiteral(prefixes)).Bind(3, ArrayLiteral(highs));
    next = 4;
  }
  if (restricting) {
    s.Bind(next, IntArrayLiteral(restrictions.phrase_of))
        .Bind(next + 1, IntArrayLiteral(restrictions.position_of))
        .Bind(next + 2, ArrayLiteral(restrictions.term_of));
    next += 3;
  }
  for (const int64_t value : bound_values) s.Bind(next++, value);
  if (segments) {
    s.Bind(segmented, ArrayLiteral(plan.terms))
        .Bind(covered, plan.covered())
        .Bind(lacking_first, IntArrayLiteral(plan.lacking_first))
        .Bind(lacking_last, IntArrayLiteral(plan.lacking_last));
  }
  Postings postings;
  std::vector<std::vector<Posting>> exact_lists(exact.size());  // By the term's index in exact.
  // The exact list of row term `key`'s term, if a query term.
  const auto list_of = [&](std::string_view key) -> std::vector<Posting>* {
    const std::string_view term = key.substr(1);
    const auto it = std::lower_bound(exact.begin(), exact.end(), term);
    return it != exact.end() && *it == term ? &exact_lists[it - exact.begin()] : nullptr;
  };
  const auto in_bounds = [&](int64_t id) { return id > after && id < before; };
  absl::flat_hash_set<int64_t> rows_read;  // Read twice with segments (by two of the branches).
  std::vector<int64_t> blocks_read;
  std::vector<std::pair<int64_t, int64_t>> lengths;  // Version id, tokens; into postings.lengths.
  while (true) {
    ASSIGN_OR_RETURN(const bool row, s.Step());
    if (!row) break;
    switch (s.Int(0)) {
      case 1:  // A field's totals.
        if (s.Int(2) == 0) postings.rows = s.Int(3);
        postings.tokens += s.Int(4);
        continue;
      case 2: {  // A segment: a row term's postings in a block, offset:positions apart by ';'.
        const int64_t first = s.Int(1);
        const std::string_view key = s.Text(2);
        std::vector<Posting>* list = list_of(key);
        if (list == nullptr) continue;
        ForEachEntry(s.Text(3), [&](int64_t offset, std::string_view at) {
          if (!in_bounds(first + offset)) return;
          list->push_back({.version_id = first + offset,
                           .field = key[0] - '0',
                           .positions = ParsePositions(at)});
        });
        continue;
      }
      case 3: {  // A block: its versions' lengths, offset:tokens apart by ';'.
        const int64_t first = s.Int(1);
        blocks_read.push_back(first);
        ForEachEntry(s.Text(3), [&](int64_t offset, std::string_view tokens) {
          int64_t length = 0;
          std::from_chars(tokens.data(), tokens.data() + tokens.size(), length);
          if (in_bounds(first + offset)) lengths.emplace_back(first + offset, length);
        });
        continue;
      }
      default:
        break;
    }
    const int64_t version_id = s.Int(1);
    if (segments && !rows_read.insert(version_id).second) continue;
    lengths.emplace_back(version_id, SumInts(s.Text(4)));
    // Each term of the row with its positions; most rows hold a few of the query's terms
    // among dozens (a common term's read is every version's row), so nothing is copied
    // until one is.
    ForEachRowTerm(s.Text(2), s.Text(3), [&](std::string_view key, std::string_view at) {
      if (key.empty()) return;
      const int field = key[0] - '0';
      const std::string_view term = key.substr(1);
      const auto posting = [&] {
        return Posting{.version_id = version_id, .field = field, .positions = ParsePositions(at)};
      };
      if (std::vector<Posting>* list = list_of(key);
          list != nullptr && !(segments && plan.FromSegment(version_id, key))) {
        list->push_back(posting());
      }
      for (const std::string& prefix : prefixes) {
        if (term.starts_with(prefix)) postings.prefixed[prefix].push_back(posting());
      }
    });
  }
  if (segments) {
    std::sort(blocks_read.begin(), blocks_read.end());
    if (blocks_read.size() != plan.blocks.size()) return std::nullopt;
    for (size_t i = 0; i < blocks_read.size(); ++i) {
      if (blocks_read[i] != plan.blocks[i].first) return std::nullopt;
    }
  }
  for (size_t i = 0; i < exact.size(); ++i) {
    if (!exact_lists[i].empty()) postings.exact[exact[i]] = std::move(exact_lists[i]);
  }
  if (!lengths.empty()) {
    const auto [low, high] = std::minmax_element(lengths.begin(), lengths.end());
    postings.lengths = decltype(postings.lengths)(low->first, high->first, lengths.size());
  }
  for (const auto& [version_id, tokens] : lengths) postings.lengths.Set(version_id, tokens);
  return postings;
}

// ReadPostingsOnce, with segments for the exact terms read whole among `segmented` (row terms;
// none when null), and without them when the blocks changed between the two reads.
absl::StatusOr<Postings> ReadPostings(store::Db& db, const std::vector<PhraseTokens>& phrases,
                                      int64_t after, int64_t before,
                                      const absl::flat_hash_set<std::string>* segmented) {
  SegmentPlan plan;
  if (segmented != nullptr && !segmented->empty()) {
    const std::vector<std::string> exact = TermsOf(phrases, false);
    absl::flat_hash_set<std::string> may_be_segmented;  // Terms with a row term in `segmented`.
    for (const std::string& term : exact) {
      for (const std::string& key : RowTermsOf({term})) {
        if (segmented->contains(key)) may_be_segmented.insert(term);
      }
    }
    std::vector<std::string> candidates;
    for (std::string& key : WholeRowTerms(exact, RestrictionsOf(phrases, may_be_segmented))) {
      if (segmented->contains(key)) candidates.push_back(std::move(key));
    }
    if (!candidates.empty()) {
      ASSIGN_OR_RETURN(plan, PlanSegments(db, candidates));
    }
  }
  ASSIGN_OR_RETURN(std::optional<Postings> postings,
                   ReadPostingsOnce(db, phrases, after, before, plan));
  if (postings) return *std::move(postings);
  ASSIGN_OR_RETURN(postings, ReadPostingsOnce(db, phrases, after, before, SegmentPlan()));
  return *std::move(postings);
}

// The instances of `phrase` in each field of each version holding it, a field once: the
// positions where its tokens stand one after another (FTS5's instances, which BM25 counts).
std::vector<std::pair<FieldOf, int64_t>> Instances(const PhraseTokens& phrase,
                                                   const Postings& postings) {
  std::vector<std::pair<FieldOf, int64_t>> instances;
  if (phrase.empty()) return instances;
  // Each token's positions by field: its list's postings when it has one list (a term, most
  // often: a field once each, read in place), else its alternatives' (and a prefix's
  // terms') positions gathered. A common term's list is a posting for every version.
  std::vector<const std::vector<Posting>*> single(phrase.size(), nullptr);
  std::vector<absl::flat_hash_map<FieldOf, Positions>> gathered(phrase.size());
  for (size_t k = 0; k < phrase.size(); ++k) {
    const auto& source = phrase[k].prefix ? postings.prefixed : postings.exact;
    std::vector<const std::vector<Posting>*> lists;
    for (const std::string& term : phrase[k].terms) {
      if (const auto it = source.find(term); it != source.end()) lists.push_back(&it->second);
    }
    if (lists.empty()) return instances;  // A token found nowhere: no instance.
    if (lists.size() == 1 && !phrase[k].prefix) {
      single[k] = lists[0];
      continue;
    }
    for (const std::vector<Posting>* list : lists) {
      for (const Posting& p : *list) {
        Positions& into = gathered[k][FieldOf(p.version_id, p.field)];
        into.insert(into.end(), p.positions.begin(), p.positions.end());
      }
    }
    for (auto& [field, positions] : gathered[k]) {
      std::sort(positions.begin(), positions.end());
      positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
    }
  }
  // The first token's fields are walked; the later tokens' looked up.
  using PositionsByField = util::IdMap<const Positions*, nullptr>;
  std::vector<PositionsByField> later(phrase.size());
  for (size_t k = 1; k < phrase.size(); ++k) {
    if (single[k] != nullptr) {
      later[k] = postings.ByField<PositionsByField>(single[k]->size());
      for (const Posting& p : *single[k]) {
        later[k].TryEmplace(FieldKey({p.version_id, p.field}), &p.positions);
      }
    } else {
      later[k] = postings.ByField<PositionsByField>(gathered[k].size());
      for (const auto& [field, positions] : gathered[k]) {
        later[k].TryEmplace(FieldKey(field), &positions);
      }
    }
  }
  std::vector<const Positions*> rest(phrase.size());
  const auto count = [&](FieldOf field, const Positions& first) {
    for (size_t k = 1; k < phrase.size(); ++k) {
      const Positions* const* positions = later[k].Find(FieldKey(field));
      if (positions == nullptr) return;
      rest[k] = *positions;
    }
    int64_t n = 0;
    for (const int32_t start : first) {
      bool whole = true;
      for (size_t k = 1; k < phrase.size() && whole; ++k) {
        whole =
            std::binary_search(rest[k]->begin(), rest[k]->end(), start + static_cast<int32_t>(k));
      }
      n += whole;
    }
    if (n > 0) instances.push_back({field, n});
  };
  if (single[0] != nullptr) {
    instances.reserve(single[0]->size());
    for (const Posting& p : *single[0]) count(FieldOf(p.version_id, p.field), p.positions);
  } else {
    for (const auto& [field, positions] : gathered[0]) count(field, positions);
  }
  return instances;
}

// The versions matching any of `phrases` among `postings`.
absl::flat_hash_set<int64_t> MatchingVersions(const std::vector<PhraseTokens>& phrases,
                                              const Postings& postings) {
  absl::flat_hash_set<int64_t> versions;
  for (const PhraseTokens& phrase : phrases) {
    for (const auto& [field, count] : Instances(phrase, postings)) versions.insert(field.first);
  }
  return versions;
}

}  // namespace

absl::StatusOr<std::vector<RankedMatch>> PgKeywordIndex::Rank(const KeywordMatch& match,
                                                              int64_t offset, int64_t limit) {
  const std::vector<PhraseTokens> phrases = PhrasesOf(match);
  ASSIGN_OR_RETURN(const absl::flat_hash_set<std::string>* segmented, SegmentTerms());
  ASSIGN_OR_RETURN(const Postings postings,
                   ReadPostings(*db_, phrases, kNoLowerBound, kNoUpperBound, segmented));
  // Each matching version has a slot: its id, its bits (phrase p matched: bit p) and, by
  // phrase, the phrase's instances in it, each weighted by its field's weight. In arrays, not
  // an allocation a match: a common term matches every version.
  const size_t n = phrases.size();
  auto slot_of = postings.ByVersion<util::IdMap<size_t, SIZE_MAX>>();
  std::vector<int64_t> ids;
  std::vector<uint64_t> bits;
  std::vector<size_t> last_phrase;  // The last phrase found in the slot, to count each once.
  std::vector<double> freq;         // freq[slot * n + p].
  std::vector<double> idf(n);
  for (size_t p = 0; p < n; ++p) {
    int64_t holding = 0;
    for (const auto& [field, count] : Instances(phrases[p], postings)) {
      const auto [at, added] = slot_of.TryEmplace(field.first, ids.size());
      if (added) {
        ids.push_back(field.first);
        bits.push_back(0);
        last_phrase.push_back(n);
        freq.resize(freq.size() + n, 0.0);
      }
      const size_t slot = *at;
      if (last_phrase[slot] != p) {
        last_phrase[slot] = p;
        ++holding;
      }
      freq[slot * n + p] += static_cast<double>(count) * kFieldWeights[field.second];
      if (p < 64) bits[slot] |= uint64_t{1} << p;
    }
    idf[p] = Bm25Idf(postings.rows, holding);
  }
  const double mean_length =
      static_cast<double>(postings.tokens) / static_cast<double>(postings.rows);
  std::vector<RankedMatch> ranked;
  ranked.reserve(ids.size());
  for (size_t slot = 0; slot < ids.size(); ++slot) {
    // Read in the same snapshot as the postings: a version is there unless a write raced
    // a read outside a transaction.
    const int64_t* length = postings.lengths.Find(ids[slot]);
    if (length == nullptr) continue;
    const std::span<const double> its(freq.data() + slot * n, n);
    ranked.push_back({.version_id = ids[slot],
                      .score = Bm25Score(idf, its, *length, mean_length),
                      .phrases = bits[slot]});
  }
  const auto better = [](const RankedMatch& a, const RankedMatch& b) {
    return a.score != b.score ? a.score > b.score : a.version_id < b.version_id;
  };
  const size_t begin = static_cast<size_t>(std::clamp<int64_t>(offset, 0, ranked.size()));
  const size_t end = static_cast<size_t>(
      std::clamp<int64_t>(limit < 0 ? ranked.size() : offset + limit, begin, ranked.size()));
  std::partial_sort(ranked.begin(), ranked.begin() + end, ranked.end(), better);
  ranked.erase(ranked.begin() + end, ranked.end());
  ranked.erase(ranked.begin(), ranked.begin() + begin);
  return ranked;
}

absl::StatusOr<std::vector<int64_t>> PgKeywordIndex::NewestMatches(const KeywordMatch& match,
                                                                   int64_t before, int64_t limit) {
  const std::vector<PhraseTokens> phrases = PhrasesOf(match);
  if (AllSingleTerms(phrases)) {
    const std::vector<std::string> keys = RowTermsOf(TermsOf(phrases, false));
    if (keys.empty()) return std::vector<int64_t>();
    // The planner weighs the terms' frequencies (ANALYZE's most common elements): a rare
    // term's few rows by the GIN index, a common term's newest by the primary key.
    ASSIGN_OR_RETURN(store::Stmt s,
                     db_->Prepare("SELECT version_id FROM text_documents "
                                  "WHERE terms && CAST(?1 AS text[]) AND version_id < ?2 "
                                  "ORDER BY version_id DESC LIMIT ?3"));
    s.Bind(1, ArrayLiteral(keys)).Bind(2, before).Bind(3, limit);
    return s.Ints();
  }
  ASSIGN_OR_RETURN(const absl::flat_hash_set<std::string>* segmented, SegmentTerms());
  ASSIGN_OR_RETURN(const Postings postings,
                   ReadPostings(*db_, phrases, kNoLowerBound, before, segmented));
  const absl::flat_hash_set<int64_t> matching = MatchingVersions(phrases, postings);
  std::vector<int64_t> newest(matching.begin(), matching.end());
  std::sort(newest.begin(), newest.end(), std::greater<>());
  if (limit >= 0 && static_cast<int64_t>(newest.size()) > limit) newest.resize(limit);
  return newest;
}

absl::StatusOr<int64_t> PgKeywordIndex::IndexedRows() {
  ASSIGN_OR_RETURN(store::Stmt s,
                   db_->Prepare("SELECT documents FROM text_totals WHERE field = 0"));
  ASSIGN_OR_RETURN(const bool row, s.Step());
  return row ? s.Int(0) : int64_t{0};
}

absl::StatusOr<PgKeywordIndex::Statistics> PgKeywordIndex::ReadStatistics(
    const std::vector<std::string>& terms) {
  Statistics out{.bounds = std::vector<int64_t>(terms.size(), 0)};
  std::vector<std::string> alternatives;
  std::vector<size_t> of_term;  // Each alternative's index in `terms`.
  for (size_t i = 0; i < terms.size(); ++i) {
    const PhraseTokens phrase = TokensOf(terms[i], false);
    if (phrase.size() > 1) out.bounds[i] = std::numeric_limits<int64_t>::max();
    if (phrase.size() != 1) continue;
    for (const std::string& term : phrase[0].terms) {
      alternatives.push_back(term);
      of_term.push_back(i);
    }
  }
  // The documents of each term and field, summed: at least the versions holding any. A row
  // without a term: the index's size.
  ASSIGN_OR_RETURN(store::Stmt s,
                   db_->Prepare("SELECT term, documents FROM text_term_stats "
                                "WHERE term = ANY(CAST(?1 AS text[])) "
                                "UNION ALL SELECT NULL, documents FROM text_totals WHERE field = 0",
                                store::Plan::kGeneric));
  s.Bind(1, ArrayLiteral(alternatives));
  absl::flat_hash_map<std::string, int64_t> documents;  // kNoUpperBound: saturated.
  while (true) {
    ASSIGN_OR_RETURN(const bool row, s.Step());
    if (!row) break;
    if (s.IsNull(0)) {
      out.rows = s.Int(1);
      continue;
    }
    int64_t& n = documents[std::string(s.Text(0))];
    n = AddDocuments(n, s.Int(1) >= kSaturatedDocuments ? kNoUpperBound : s.Int(1));
  }
  for (size_t a = 0; a < alternatives.size(); ++a) {
    const auto it = documents.find(alternatives[a]);
    if (it == documents.end()) continue;
    int64_t& bound = out.bounds[of_term[a]];
    bound = AddDocuments(bound, it->second);
  }
  return out;
}

absl::StatusOr<bool> PgKeywordIndex::MatchesMoreThan(const std::string& term, int64_t after,
                                                     int64_t count) {
  const std::vector<PhraseTokens> phrases = {TokensOf(term, false)};
  if (!AllSingleTerms(phrases)) {
    ASSIGN_OR_RETURN(const Postings postings,
                     ReadPostings(*db_, phrases, after, kNoUpperBound, nullptr));
    return static_cast<int64_t>(MatchingVersions(phrases, postings).size()) > count;
  }
  ASSIGN_OR_RETURN(store::Stmt s,
                   db_->Prepare("SELECT count(*) FROM (SELECT 1 FROM text_documents "
                                "WHERE terms && CAST(?1 AS text[]) AND version_id > ?2 "
                                "LIMIT ?3) AS m"));
  s.Bind(1, ArrayLiteral(RowTermsOf(TermsOf(phrases, false)))).Bind(2, after).Bind(3, count + 1);
  ASSIGN_OR_RETURN(const bool row, s.Step());
  return row && s.Int(0) > count;
}

}  // namespace strata::text
