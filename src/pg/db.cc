#include "pg/db.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "pg/schema.h"
#include "util/status_macros.h"
#include "util/sv.h"

namespace strata::pg {
namespace {

bool IsNameStart(char c) { return absl::ascii_isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsNameChar(char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The index of the end of the quoted text starting at `sql[i]` (a quote `q`; a doubled quote
// inside is one quote character), or sql.size() when unterminated.
size_t SkipQuoted(std::string_view sql, size_t i, char q) {
  for (++i; i < sql.size(); ++i) {
    if (sql[i] != q) continue;
    if (i + 1 < sql.size() && sql[i + 1] == q) {
      ++i;
      continue;
    }
    return i + 1;
  }
  return sql.size();
}

// BYTEA's hex text form ("\x0a1b") to bytes.
std::string DecodeBytea(std::string_view text) {
  std::string out;
  if (text.size() < 2 || text.substr(0, 2) != "\\x") return out;
  text.remove_prefix(2);
  out.reserve(text.size() / 2);
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    return (absl::ascii_tolower(static_cast<unsigned char>(c)) - 'a') + 10;
  };
  for (size_t i = 0; i + 1 < text.size(); i += 2) {
    out.push_back(static_cast<char>(nibble(text[i]) << 4 | nibble(text[i + 1])));
  }
  return out;
}

// A double as PostgreSQL reads it back exactly: the shortest text that round-trips.
std::string DoubleText(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  return std::string(buf, end);
}

}  // namespace

Placeholders TranslatePlaceholders(std::string_view sql) {
  Placeholders out;
  out.sql.reserve(sql.size() + 8);
  auto number = [&out](int n) {
    if (n > out.count) {
      out.count = n;
      out.names.resize(n);
    }
    absl::StrAppend(&out.sql, "$", n);
  };
  size_t i = 0;
  while (i < sql.size()) {
    const char c = sql[i];
    if (c == '\'' || c == '"') {
      const size_t end = SkipQuoted(sql, i, c);
      out.sql.append(sql.substr(i, end - i));
      i = end;
    } else if (c == '-' && i + 1 < sql.size() && sql[i + 1] == '-') {
      const size_t end = std::min(sql.find('\n', i), sql.size());
      out.sql.append(sql.substr(i, end - i));
      i = end;
    } else if (c == ':' && i + 1 < sql.size() && sql[i + 1] == ':') {
      out.sql.append("::");
      i += 2;
    } else if (c == '?') {
      size_t end = i + 1;
      while (end < sql.size() && absl::ascii_isdigit(static_cast<unsigned char>(sql[end]))) ++end;
      int n = out.count + 1;
      if (end > i + 1) {
        (void)absl::SimpleAtoi(ToAbsl(sql.substr(i + 1, end - i - 1)), &n);
      }
      number(n);
      i = end;
    } else if (c == ':' && i + 1 < sql.size() && IsNameStart(sql[i + 1])) {
      size_t end = i + 2;
      while (end < sql.size() && IsNameChar(sql[end])) ++end;
      const std::string_view name = sql.substr(i, end - i);
      int n = 0;
      for (size_t k = 0; k < out.names.size(); ++k) {
        if (out.names[k] == name) n = static_cast<int>(k) + 1;
      }
      if (n == 0) {
        n = out.count + 1;
        number(n);
        out.names[n - 1] = std::string(name);
      } else {
        number(n);
      }
      i = end;
    } else {
      out.sql.push_back(c);
      ++i;
    }
  }
  return out;
}

// A statement on PostgreSQL, prepared by the server once per session under a name of its
// own: parameters kept until the first Step runs it; its rows read in place from the result.
class PgStmt final : public store::EngineStmt {
 public:
  PgStmt(PgDb* db, Placeholders placeholders, std::string name, store::Plan plan)
      : db_(db),
        names_(std::move(placeholders.names)),
        stmt_{.name = std::move(name),
              .sql = std::move(placeholders.sql),
              .plan = plan},
        params_(placeholders.count) {}

  void BindInt(int index, int64_t value) override {
    char digits[24];
    const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, value);
    Set(index, std::string_view(digits, end - digits), false);
  }
  void BindText(int index, std::string_view value) override { Set(index, value, false); }
  void BindDouble(int index, double value) override { Set(index, DoubleText(value), false); }
  void BindNull(int index) override {
    if (Param* p = At(index)) p->null = true;
  }
  // Sent as bytes (binary format): BYTEA needs no encoding then.
  void BindBlob(int index, std::string_view bytes) override { Set(index, bytes, true); }
  int ParameterIndex(const char* name) const override {
    for (size_t i = 0; i < names_.size(); ++i) {
      if (names_[i] == name) return static_cast<int>(i) + 1;
    }
    return 0;
  }

  absl::StatusOr<bool> Step() override {
    if (sent_ahead_) {
      sent_ahead_ = false;
      if (db_->conn_->Waiting(&result_)) RETURN_IF_ERROR(db_->conn_->Flush());
      if (result_.empty()) {
        return absl::AbortedError(
            "a statement sent ahead has no result: it, or one before it in its transaction, "
            "failed");
      }
      db_->changes_ = result_.affected();
      ran_ = true;
      row_ = -1;
    }
    if (!ran_) {
      RETURN_IF_ERROR(BindError());
      ASSIGN_OR_RETURN(result_, db_->conn_->RunPrepared(stmt_, params_));
      db_->changes_ = result_.affected();
      ran_ = true;
      row_ = -1;
    }
    if (++row_ < result_.rows()) return true;
    // Done: ready to run again, with the same parameters (as SQLite's).
    ran_ = false;
    result_ = {};
    return false;
  }

  absl::StatusOr<int64_t> RunInsert() override {
    ASSIGN_OR_RETURN(const bool row, Step());
    if (!row) return absl::InternalError("an INSERT ... RETURNING id returned no row");
    const int64_t id = Int(0);
    while (true) {
      ASSIGN_OR_RETURN(const bool more, Step());
      if (!more) return id;
    }
  }

  absl::Status RunLater() override {
    if (!db_->conn_->in_transaction()) return EngineStmt::RunLater();
    RETURN_IF_ERROR(BindError());
    return db_->conn_->Queue(stmt_, params_);
  }

  absl::Status Send() override {
    if (!db_->conn_->in_transaction()) return absl::OkStatus();  // The first Step runs it.
    RETURN_IF_ERROR(BindError());
    RETURN_IF_ERROR(db_->conn_->Queue(stmt_, params_, &result_));
    sent_ahead_ = true;
    return absl::OkStatus();
  }

  void Reset() override {
    if (sent_ahead_) db_->conn_->Forget(&result_);
    sent_ahead_ = false;
    ran_ = false;
    result_ = {};
    for (Param& p : params_) p.null = true;
    bad_index_ = 0;
  }

  bool IsNull(int col) const override { return result_.IsNull(row_, col); }
  int64_t Int(int col) const override {
    const std::string_view v = result_.Value(row_, col);
    if (v == "t") return 1;  // A boolean.
    int64_t out = 0;
    std::from_chars(v.data(), v.data() + v.size(), out);
    return out;
  }
  double Double(int col) const override {
    // Not strtod, which reads the process's locale's decimal separator.
    const std::string_view v = result_.Value(row_, col);
    double out = 0.0;
    std::from_chars(v.data(), v.data() + v.size(), out);
    return out;
  }
  std::string_view Text(int col) const override { return result_.Value(row_, col); }
  std::string_view Blob(int col) const override {
    if (result_.IsNull(row_, col)) return {};
    if (blobs_.size() <= static_cast<size_t>(col)) blobs_.resize(col + 1);
    blobs_[col] = DecodeBytea(result_.Value(row_, col));
    return blobs_[col];
  }

 private:
  absl::Status BindError() const {
    if (bad_index_ == 0) return absl::OkStatus();
    return absl::InternalError(absl::StrCat(
        "postgresql: binding parameter ", bad_index_, " of ", params_.size(),
        " failed: no such parameter in: ", ToAbsl(std::string_view(stmt_.sql).substr(0, 120))));
  }
  Param* At(int index) {
    if (index < 1 || index > static_cast<int>(params_.size())) {
      if (bad_index_ == 0) bad_index_ = index;
      return nullptr;
    }
    return &params_[index - 1];
  }
  void Set(int index, std::string_view value, bool binary) {
    if (Param* p = At(index)) {
      p->value.assign(value.data(), value.size());
      p->null = false;
      p->binary = binary;
    }
  }

  PgDb* db_;                              // Not owned; outlives this.
  const std::vector<std::string> names_;  // names_[i]: parameter i + 1's ":name", or "".
  PreparedStatement stmt_;
  std::vector<Param> params_;  // Their strings keep their capacity from run to run.
  int bad_index_ = 0;          // The first parameter bound out of range, 0 when none.
  bool ran_ = false;           // result_ holds the result of a run not yet stepped to its end.
  bool sent_ahead_ = false;    // Sent by Send; result_ gets its result when it is read.
  Result result_;
  int row_ = -1;
  mutable std::vector<std::string> blobs_;  // Decoded BYTEA columns of the current row.
};

absl::StatusOr<std::unique_ptr<PgDb>> PgDb::Open(const std::string& uri,
                                                 const store::DbOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<Connection> conn, Connection::Open(uri));
  // lock_timeout 0 would wait for ever.
  const int lock_timeout_ms = std::max(options.busy_timeout_ms, 1);
  return std::unique_ptr<PgDb>(new PgDb(std::move(conn), uri, lock_timeout_ms));
}

PgDb::~PgDb() { ClearCache(); }

absl::Status PgDb::Exec(std::string_view sql) { return conn_->Exec(sql); }

absl::StatusOr<std::unique_ptr<store::EngineStmt>> PgDb::Compile(std::string_view sql,
                                                                store::Plan plan) {
  return std::make_unique<PgStmt>(this, TranslatePlaceholders(sql),
                                  absl::StrCat("strata_", ++statements_), plan);
}

absl::StatusOr<std::unique_lock<std::timed_mutex>> PgDb::BeginWrite(bool take_turns) {
  // Sent ahead, with the transaction's first statement: no round trip of their own. The
  // change lock is taken now rather than by the first write: the transaction's reads must
  // already see every other writer's commits. A writer that holds it too long (a stuck
  // node) fails that first statement with Unavailable after the lock timeout instead of
  // hanging it; the timeout applies to every lock the transaction waits for.
  RETURN_IF_ERROR(conn_->QueueSql("BEGIN"));
  RETURN_IF_ERROR(conn_->QueueSql(lock_timeout_));
  if (take_turns) RETURN_IF_ERROR(conn_->QueueSql(change_lock_));
  return std::unique_lock<std::timed_mutex>();
}

absl::Status PgDb::BeginRead() {
  // With the snapshot's first statement.
  return conn_->QueueSql("BEGIN ISOLATION LEVEL REPEATABLE READ");
}

absl::Status PgDb::Commit(const std::function<void()>& then) {
  // COMMIT of a failed transaction "succeeds" as a rollback.
  if (conn_->transaction_failed()) {
    return absl::AbortedError("a statement of the transaction failed; it is rolled back");
  }
  if (!then) return conn_->Exec("COMMIT");
  RETURN_IF_ERROR(conn_->QueueCommit());
  then();
  return conn_->CommitOutcome();
}

}  // namespace strata::pg
