#include "pg/connection.h"

#include <dlfcn.h>
#include <libpq-fe.h>
#include <poll.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "util/status_macros.h"
#include "util/sv.h"

namespace strata::pg {
namespace {

// libpq, loaded when the first connection opens rather than linked: linked, it and the
// libraries it needs (TLS, Kerberos, LDAP, SASL, ...) were loaded by every start of the
// server, which never connects to PostgreSQL, and cost its cold start ~20 ms.
struct LibPq {
  decltype(&::PQclear) PQclear = nullptr;
  decltype(&::PQcmdTuples) PQcmdTuples = nullptr;
  decltype(&::PQconnectdbParams) PQconnectdbParams = nullptr;
  decltype(&::PQconsumeInput) PQconsumeInput = nullptr;
  decltype(&::PQconninfoFree) PQconninfoFree = nullptr;
  decltype(&::PQconninfoParse) PQconninfoParse = nullptr;
  decltype(&::PQerrorMessage) PQerrorMessage = nullptr;
  decltype(&::PQexec) PQexec = nullptr;
  decltype(&::PQexecParams) PQexecParams = nullptr;
  decltype(&::PQexecPrepared) PQexecPrepared = nullptr;
  decltype(&::PQfinish) PQfinish = nullptr;
  decltype(&::PQfname) PQfname = nullptr;
  decltype(&::PQenterPipelineMode) PQenterPipelineMode = nullptr;
  decltype(&::PQexitPipelineMode) PQexitPipelineMode = nullptr;
  decltype(&::PQfreemem) PQfreemem = nullptr;
  decltype(&::PQgetResult) PQgetResult = nullptr;
  decltype(&::PQpipelineStatus) PQpipelineStatus = nullptr;
  decltype(&::PQpipelineSync) PQpipelineSync = nullptr;
  decltype(&::PQsendPrepare) PQsendPrepare = nullptr;
  decltype(&::PQsendQueryParams) PQsendQueryParams = nullptr;
  decltype(&::PQsendQueryPrepared) PQsendQueryPrepared = nullptr;
  decltype(&::PQgetisnull) PQgetisnull = nullptr;
  decltype(&::PQgetlength) PQgetlength = nullptr;
  decltype(&::PQgetvalue) PQgetvalue = nullptr;
  decltype(&::PQnfields) PQnfields = nullptr;
  decltype(&::PQntuples) PQntuples = nullptr;
  decltype(&::PQprepare) PQprepare = nullptr;
  decltype(&::PQreset) PQreset = nullptr;
  decltype(&::PQresultErrorField) PQresultErrorField = nullptr;
  decltype(&::PQresultErrorMessage) PQresultErrorMessage = nullptr;
  decltype(&::PQresultStatus) PQresultStatus = nullptr;
  decltype(&::PQserverVersion) PQserverVersion = nullptr;
  decltype(&::PQsocket) PQsocket = nullptr;
  decltype(&::PQsetNoticeProcessor) PQsetNoticeProcessor = nullptr;
  decltype(&::PQstatus) PQstatus = nullptr;
  decltype(&::PQtransactionStatus) PQtransactionStatus = nullptr;
  std::string error;  // Why it could not be loaded; empty when loaded.
};

const LibPq& Pq() {
  static const LibPq pq = [] {
    LibPq l;
    void* lib = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      const char* why = dlerror();
      l.error = absl::StrCat("cannot load libpq (", why ? why : "libpq.so.5: not found",
                             "); install Debian's libpq5");
      return l;
    }
    auto get = [lib, &l](auto& fn, const char* symbol) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, symbol));
      if (fn == nullptr && l.error.empty()) l.error = absl::StrCat("libpq has no ", symbol);
    };
    get(l.PQclear, "PQclear");
    get(l.PQcmdTuples, "PQcmdTuples");
    get(l.PQconnectdbParams, "PQconnectdbParams");
    get(l.PQconsumeInput, "PQconsumeInput");
    get(l.PQconninfoFree, "PQconninfoFree");
    get(l.PQconninfoParse, "PQconninfoParse");
    get(l.PQerrorMessage, "PQerrorMessage");
    get(l.PQexec, "PQexec");
    get(l.PQexecParams, "PQexecParams");
    get(l.PQexecPrepared, "PQexecPrepared");
    get(l.PQfinish, "PQfinish");
    get(l.PQfname, "PQfname");
    get(l.PQenterPipelineMode, "PQenterPipelineMode");
    get(l.PQexitPipelineMode, "PQexitPipelineMode");
    get(l.PQfreemem, "PQfreemem");
    get(l.PQgetResult, "PQgetResult");
    get(l.PQpipelineStatus, "PQpipelineStatus");
    get(l.PQpipelineSync, "PQpipelineSync");
    get(l.PQsendPrepare, "PQsendPrepare");
    get(l.PQsendQueryParams, "PQsendQueryParams");
    get(l.PQsendQueryPrepared, "PQsendQueryPrepared");
    get(l.PQgetisnull, "PQgetisnull");
    get(l.PQgetlength, "PQgetlength");
    get(l.PQgetvalue, "PQgetvalue");
    get(l.PQnfields, "PQnfields");
    get(l.PQntuples, "PQntuples");
    get(l.PQprepare, "PQprepare");
    get(l.PQreset, "PQreset");
    get(l.PQresultErrorField, "PQresultErrorField");
    get(l.PQresultErrorMessage, "PQresultErrorMessage");
    get(l.PQresultStatus, "PQresultStatus");
    get(l.PQserverVersion, "PQserverVersion");
    get(l.PQsocket, "PQsocket");
    get(l.PQsetNoticeProcessor, "PQsetNoticeProcessor");
    get(l.PQstatus, "PQstatus");
    get(l.PQtransactionStatus, "PQtransactionStatus");
    return l;
  }();
  return pq;
}

// libpq's messages end with a newline, and some run over several indented lines: one line.
std::string Message(const char* text) {
  std::string out;
  bool space = false;
  for (const char c : absl::StripAsciiWhitespace(text ? text : "")) {
    if (c == '\n' || c == '\t') {
      space = true;
      continue;
    }
    if (space && c != ' ' && !out.empty()) out.push_back(' ');
    space = false;
    out.push_back(c);
  }
  return out;
}

// The server's error as a status, by the class of its SQLSTATE (the session is still open).
absl::Status StatusOf(const std::string& message, const PGresult* result) {
  const char* state = result ? Pq().PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  const std::string_view code = state ? state : "";
  if (code == "55P03") {
    // As SQLite's busy error says it; the server's primary message only (no context).
    const char* primary = Pq().PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY);
    return absl::UnavailableError(absl::StrCat(
        "the database is busy: another session held a lock past lock_timeout; nothing was "
        "written, try again (",
        primary ? primary : message, ")"));
  }
  if (code.substr(0, 2) == "08" || code.substr(0, 2) == "57") {
    // Connection exception, operator intervention (statement_timeout, a cancel, a shutdown).
    return absl::UnavailableError(message);
  }
  if (code == "40001" || code == "40P01") return absl::AbortedError(message);
  if (code.substr(0, 2) == "23") return absl::FailedPreconditionError(message);
  if (code.substr(0, 2) == "42" || code.substr(0, 2) == "22") {
    return absl::InvalidArgumentError(message);
  }
  return absl::InternalError(message);
}

bool Succeeded(const PGresult* result) {
  const ExecStatusType status = result ? Pq().PQresultStatus(result) : PGRES_FATAL_ERROR;
  return status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK;
}

}  // namespace

Result& Result::operator=(Result&& other) noexcept {
  if (this != &other) {
    if (result_ != nullptr) Pq().PQclear(result_);
    result_ = other.result_;
    other.result_ = nullptr;
  }
  return *this;
}

Result::~Result() {
  if (result_ != nullptr) Pq().PQclear(result_);
}

int Result::rows() const { return result_ ? Pq().PQntuples(result_) : 0; }

bool Result::IsNull(int row, int col) const { return Pq().PQgetisnull(result_, row, col) != 0; }

std::string_view Result::Value(int row, int col) const {
  return {Pq().PQgetvalue(result_, row, col),
          static_cast<size_t>(Pq().PQgetlength(result_, row, col))};
}

int64_t Result::affected() const {
  const char* tuples = result_ ? Pq().PQcmdTuples(result_) : nullptr;
  return tuples && *tuples ? std::strtoll(tuples, nullptr, 10) : 0;
}

absl::StatusOr<std::unique_ptr<Connection>> Connection::Open(const std::string& uri) {
  if (!Pq().error.empty()) return absl::UnavailableError(Pq().error);
  char* parse_error = nullptr;
  PQconninfoOption* options = Pq().PQconninfoParse(uri.c_str(), &parse_error);
  if (options == nullptr) {
    const std::string message =
        parse_error ? Message(parse_error) : std::string("out of memory parsing it");
    Pq().PQfreemem(parse_error);
    return absl::InvalidArgumentError(absl::StrCat("malformed PostgreSQL URI: ", message));
  }
  Pq().PQconninfoFree(options);
  // Defaults the URI may override (its settings come after them): a server that does not
  // answer fails a connection attempt after 10 s, and one gone without closing the session
  // (a host crashed, a network cut) fails the statement in flight after about a minute of
  // silence, rather than after the system's two hours of TCP keepalive idle time.
  static constexpr const char* kKeywords[] = {"connect_timeout", "keepalives_idle",
                                              "keepalives_interval", "keepalives_count",
                                              "dbname", nullptr};
  const char* const values[] = {"10", "30", "10", "3", uri.c_str(), nullptr};
  PGconn* conn = Pq().PQconnectdbParams(kKeywords, values, /*expand_dbname=*/1);
  if (conn == nullptr) return absl::ResourceExhaustedError("libpq: out of memory");
  if (Pq().PQstatus(conn) != CONNECTION_OK) {
    const std::string message = Message(Pq().PQerrorMessage(conn));
    Pq().PQfinish(conn);
    return absl::UnavailableError(absl::StrCat("PostgreSQL unreachable: ", message));
  }
  // Our statements' notices (e.g. "relation already exists, skipping") are not for stderr.
  Pq().PQsetNoticeProcessor(
      conn, [](void*, const char*) {}, nullptr);
  auto connection = std::unique_ptr<Connection>(new Connection(conn));
  RETURN_IF_ERROR(connection->Configure());
  return connection;
}

absl::Status Connection::Configure() {
  // Set here rather than in libpq's `options`, which a URI's own would replace.
  // - Plans: the session plans a statement for its parameters at every run, and a statement
  //   planned otherwise is planned so in its transaction (BeforeRun). Left to
  //   choose, PostgreSQL switches a prepared statement to a generic plan after five runs,
  //   and there the owners' range reads ("WHERE id > $1": what changed since a watermark)
  //   get a sequential scan, as if a third of the table matched (the dedup catch-up 0.76 ms
  //   at 3,000 versions, growing with the table). Planning costs ~20-50 us a statement.
  // - No JIT: a keyword ranking's estimates (arrays unnested, CTEs) pass jit_above_cost, and
  //   compiling it took 35 ms of a 40 ms statement at 100K memories for ~1 ms of execution.
  // - No parallel workers: a statement here is a few ms, and starting a Gather's workers
  //   costs more than that. A common-term keyword read at 100K memories, whose estimate
  //   (~12,000 rows, ~900 read) passed the parallel cost thresholds once the tables were
  //   analyzed, took 40-68 ms with 2 workers against ~14 without, and ~90 ms of the server's
  //   CPU: cores the other requests wait for.
  ++round_trips_;
  const Result result(Pq().PQexec(conn_,
                                  "SET plan_cache_mode = force_custom_plan; SET jit = off; "
                                  "SET max_parallel_workers_per_gather = 0"));
  if (!Succeeded(result.result_)) return Failed(result.result_, /*was_in_transaction=*/false);
  return absl::OkStatus();
}

Connection::~Connection() { Pq().PQfinish(conn_); }

absl::StatusOr<bool> Connection::Ready(std::string_view sql) {
  if (lost_in_transaction_) {
    // The server ended the transaction with the session: only its end may run.
    const bool rollback = absl::EqualsIgnoreCase(ToAbsl(sql), "ROLLBACK");
    if (rollback || absl::EqualsIgnoreCase(ToAbsl(sql), "COMMIT")) {
      lost_in_transaction_ = false;
      if (rollback) return false;
    }
    return absl::UnavailableError(
        "the connection to PostgreSQL was lost during this transaction, which the server "
        "rolled back: nothing of it was committed");
  }
  if (Pq().PQstatus(conn_) == CONNECTION_OK && Pq().PQtransactionStatus(conn_) == PQTRANS_IDLE) {
    // Reads what the server sent since the last statement: a session it ended meanwhile (a
    // restart, pg_terminate_backend: its message, then the end of the stream) is noticed
    // now, and only a statement in flight fails. An idle session has nothing to read: one
    // poll.
    pollfd socket{.fd = Pq().PQsocket(conn_), .events = POLLIN, .revents = 0};
    while (socket.fd >= 0 && poll(&socket, 1, 0) == 1 && Pq().PQconsumeInput(conn_) == 1 &&
           Pq().PQstatus(conn_) == CONNECTION_OK) {
    }
  }
  if (Pq().PQstatus(conn_) == CONNECTION_OK) {
    // Left in pipeline mode with nothing sent (a send that failed): out of it, for the
    // statements that run alone.
    if (sent_ == 0 && Pq().PQpipelineStatus(conn_) != PQ_PIPELINE_OFF) {
      Pq().PQexitPipelineMode(conn_);
    }
    return true;
  }
  Pq().PQreset(conn_);
  if (Pq().PQstatus(conn_) != CONNECTION_OK) {
    return absl::UnavailableError(absl::StrCat("PostgreSQL unreachable (reconnecting): ",
                                               Message(Pq().PQerrorMessage(conn_))));
  }
  ++session_;
  RETURN_IF_ERROR(Configure());
  return true;
}

absl::Status Connection::Failed(const PGresult* result, bool was_in_transaction) {
  const std::string message =
      Message(result ? Pq().PQresultErrorMessage(result) : Pq().PQerrorMessage(conn_));
  if (Pq().PQstatus(conn_) == CONNECTION_OK) return StatusOf(message, result);
  lost_in_transaction_ = was_in_transaction;
  return absl::UnavailableError(absl::StrCat(
      "the PostgreSQL server closed the connection (", message, "): the statement in flight ",
      was_in_transaction ? "and its transaction were not committed" : "failed",
      "; the next statement reconnects"));
}

absl::StatusOr<Rows> Connection::Query(std::string_view sql, const std::vector<Value>& params) {
  ASSIGN_OR_RETURN(const bool run, Ready(sql));
  Rows rows;
  if (!run) return rows;
  const bool in_transaction = this->in_transaction();
  // After the queued statements' outcome (PQexecParams cannot run in pipeline mode).
  if (sent_ > 0) RETURN_IF_ERROR(Sync(/*keep_last=*/false, in_transaction).status());
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const Value& v : params) values.push_back(v ? v->c_str() : nullptr);
  const std::string text(sql);
  ++round_trips_;
  Result result(Pq().PQexecParams(conn_, text.c_str(), static_cast<int>(params.size()), nullptr,
                                  values.data(), nullptr, nullptr, /*resultFormat=*/0));
  if (!Succeeded(result.result_)) return Failed(result.result_, in_transaction);
  const int columns = Pq().PQnfields(result.result_);
  for (int c = 0; c < columns; ++c) rows.columns.emplace_back(Pq().PQfname(result.result_, c));
  const int n = result.rows();
  rows.rows.reserve(n);
  for (int r = 0; r < n; ++r) {
    std::vector<Value>& row = rows.rows.emplace_back();
    row.reserve(columns);
    for (int c = 0; c < columns; ++c) {
      if (result.IsNull(r, c)) {
        row.emplace_back();
      } else {
        row.emplace_back(std::string(result.Value(r, c)));
      }
    }
  }
  rows.affected = result.affected();
  return rows;
}

namespace {

// RunPrepared's parameters as libpq takes them.
struct ParamArrays {
  explicit ParamArrays(std::span<const Param> params) {
    for (const Param& p : params) {
      values.push_back(p.null ? nullptr : p.value.data());
      lengths.push_back(static_cast<int>(p.value.size()));
      formats.push_back(p.binary ? 1 : 0);
    }
  }
  int count() const { return static_cast<int>(values.size()); }
  absl::InlinedVector<const char*, 16> values;
  absl::InlinedVector<int, 16> lengths;
  absl::InlinedVector<int, 16> formats;
};

}  // namespace

absl::Status Connection::Prepare(PreparedStatement& stmt, bool in_transaction) {
  if (stmt.session == session_) return absl::OkStatus();
  // Not in pipeline mode, where PQprepare cannot run: what was queued goes first (a round
  // trip more, once per statement and session).
  if (sent_ > 0) RETURN_IF_ERROR(Sync(/*keep_last=*/false, in_transaction).status());
  ++round_trips_;
  const Result prepared(
      Pq().PQprepare(conn_, stmt.name.c_str(), stmt.sql.c_str(), 0, /*paramTypes=*/nullptr));
  if (!Succeeded(prepared.result_)) return Failed(prepared.result_, in_transaction);
  stmt.session = session_;
  return absl::OkStatus();
}

absl::StatusOr<Result> Connection::RunPrepared(PreparedStatement& stmt,
                                               std::span<const Param> params) {
  ASSIGN_OR_RETURN(const bool run, Ready(stmt.sql));
  if (!run) return Result();
  const bool in_transaction = this->in_transaction();
  RETURN_IF_ERROR(BeforeRun(stmt, static_cast<int>(params.size()), in_transaction));
  const ParamArrays p(params);
  if (sent_ > 0) {
    // After the queued statements, in their round trip.
    RETURN_IF_ERROR(Sent(Pq().PQsendQueryPrepared(conn_, stmt.name.c_str(), p.count(),
                                                  p.values.data(), p.lengths.data(),
                                                  p.formats.data(), /*resultFormat=*/0),
                         in_transaction));
    return Sync(/*keep_last=*/true, in_transaction);
  }
  ++round_trips_;
  Result result(Pq().PQexecPrepared(conn_, stmt.name.c_str(), p.count(), p.values.data(),
                                    p.lengths.data(), p.formats.data(), /*resultFormat=*/0));
  if (!Succeeded(result.result_)) return Failed(result.result_, in_transaction);
  return result;
}

absl::Status Connection::Queue(PreparedStatement& stmt, std::span<const Param> params,
                               Result* keep) {
  ASSIGN_OR_RETURN(const bool run, Ready(stmt.sql));
  if (!run) return absl::OkStatus();
  const bool in_transaction = this->in_transaction();
  if (!in_transaction) {
    return absl::InternalError("a statement was queued outside a transaction");
  }
  RETURN_IF_ERROR(BeforeRun(stmt, static_cast<int>(params.size()), in_transaction));
  RETURN_IF_ERROR(EnterPipeline(in_transaction));
  const ParamArrays p(params);
  RETURN_IF_ERROR(Sent(Pq().PQsendQueryPrepared(conn_, stmt.name.c_str(), p.count(),
                                                p.values.data(), p.lengths.data(),
                                                p.formats.data(), /*resultFormat=*/0),
                       in_transaction));
  if (keep != nullptr) keeps_.emplace_back(sent_ - 1, keep);
  return absl::OkStatus();
}

bool Connection::Waiting(const Result* keep) const {
  return absl::c_any_of(keeps_, [keep](const auto& k) { return k.second == keep; });
}

void Connection::Forget(const Result* keep) {
  for (auto& k : keeps_) {
    if (k.second == keep) k.second = nullptr;
  }
}

absl::Status Connection::Flush() {
  if (sent_ == 0) return absl::OkStatus();
  return Sync(/*keep_last=*/false, in_transaction()).status();
}

absl::Status Connection::QueueSql(std::string_view sql) {
  ASSIGN_OR_RETURN(const bool run, Ready(sql));
  if (!run) return absl::OkStatus();
  NotePlanMode(sql);
  const bool in_transaction = this->in_transaction();
  RETURN_IF_ERROR(EnterPipeline(in_transaction));
  return SendSql(sql, in_transaction);
}

absl::Status Connection::QueueCommit() {
  ASSIGN_OR_RETURN(const bool run, Ready("COMMIT"));
  if (!run) return absl::OkStatus();
  const bool in_transaction = this->in_transaction();
  if (!in_transaction || commit_at_ >= 0) {
    return absl::InternalError("COMMIT was sent ahead outside a transaction, or twice");
  }
  RETURN_IF_ERROR(EnterPipeline(in_transaction));
  RETURN_IF_ERROR(SendSql("COMMIT", in_transaction));
  commit_at_ = sent_ - 1;
  return absl::OkStatus();
}

absl::Status Connection::CommitOutcome() {
  if (commit_at_ >= 0) Sync(/*keep_last=*/false, in_transaction()).IgnoreError();
  return commit_outcome_;
}

absl::Status Connection::BeforeRun(PreparedStatement& stmt, int params, bool in_transaction) {
  RETURN_IF_ERROR(Prepare(stmt, in_transaction));
  NotePlanMode(stmt.sql);
  if (!in_transaction || params == 0 || plan_mode_ == stmt.plan) return absl::OkStatus();
  RETURN_IF_ERROR(EnterPipeline(in_transaction));
  static constexpr std::string_view kSet[] = {
      "SET LOCAL plan_cache_mode = force_custom_plan",   // store::Plan::kForEachRun
      "SET LOCAL plan_cache_mode = auto",                // store::Plan::kOnce
      "SET LOCAL plan_cache_mode = force_generic_plan",  // store::Plan::kGeneric
  };
  static_assert(std::size(kSet) == store::kPlans);
  RETURN_IF_ERROR(SendSql(kSet[static_cast<int>(stmt.plan)], in_transaction));
  plan_mode_ = stmt.plan;
  return absl::OkStatus();
}

void Connection::NotePlanMode(std::string_view sql) {
  const absl::string_view s = ToAbsl(sql);
  if (absl::StartsWithIgnoreCase(s, "BEGIN")) {
    plan_mode_ = store::Plan::kForEachRun;  // The session's, Configure.
  } else if (absl::StartsWithIgnoreCase(s, "ROLLBACK TO")) {
    plan_mode_.reset();
  }
}

absl::Status Connection::SendSql(std::string_view sql, bool in_transaction) {
  const std::string text(sql);
  return Sent(Pq().PQsendQueryParams(conn_, text.c_str(), 0, nullptr, nullptr, nullptr, nullptr,
                                     /*resultFormat=*/0),
              in_transaction);
}

absl::Status Connection::Sent(int sent, bool in_transaction) {
  if (sent == 1) {
    ++sent_;
    return absl::OkStatus();
  }
  const absl::Status failed = Failed(nullptr, in_transaction);
  // The commands sent before it are read (the transaction is left to roll back).
  Sync(/*keep_last=*/false, in_transaction).IgnoreError();
  return failed;
}

absl::Status Connection::EnterPipeline(bool in_transaction) {
  if (Pq().PQpipelineStatus(conn_) != PQ_PIPELINE_OFF || Pq().PQenterPipelineMode(conn_) == 1) {
    return absl::OkStatus();
  }
  return Failed(nullptr, in_transaction);
}

absl::StatusOr<Result> Connection::Sync(bool keep_last, bool was_in_transaction) {
  const int sent = sent_;
  sent_ = 0;
  const int commit_at = std::exchange(commit_at_, -1);
  bool commit_read = false;
  std::vector<std::pair<int, Result*>> keeps;
  keeps.swap(keeps_);
  auto keep = keeps.begin();
  absl::Status first;  // The first failure.
  Result last;
  ++round_trips_;
  if (Pq().PQpipelineSync(conn_) != 1) {
    first = Failed(nullptr, was_in_transaction);
  } else {
    for (int i = 0; i < sent && first.ok(); ++i) {
      Result result(Pq().PQgetResult(conn_));
      if (result.result_ == nullptr) {  // The session was lost.
        first = Failed(nullptr, was_in_transaction);
        break;
      }
      // A command after a failed one is not run: PGRES_PIPELINE_ABORTED.
      if (!Succeeded(result.result_)) first = Failed(result.result_, was_in_transaction);
      if (i == commit_at) {
        commit_outcome_ = first;
        commit_read = true;
      }
      // The end of this command's results.
      while (PGresult* more = Pq().PQgetResult(conn_)) Pq().PQclear(more);
      if (i == sent - 1 && keep_last) {
        last = std::move(result);
      } else if (keep != keeps.end() && keep->first == i) {
        if (keep->second != nullptr && first.ok()) *keep->second = std::move(result);
        ++keep;
      }
    }
    // Up to and including the sync's own result, which ends the pipeline.
    while (Pq().PQstatus(conn_) == CONNECTION_OK) {
      const Result rest(Pq().PQgetResult(conn_));
      if (rest.result_ != nullptr && Pq().PQresultStatus(rest.result_) == PGRES_PIPELINE_SYNC) {
        break;
      }
    }
  }
  // A COMMIT not reached: not committed, for the first failure's reason.
  if (commit_at >= 0 && !commit_read) commit_outcome_ = first;
  // Fails only with results unread, on a lost session (PQreset ends the mode then).
  Pq().PQexitPipelineMode(conn_);
  RETURN_IF_ERROR(first);
  return last;
}

absl::Status Connection::Exec(std::string_view sql) {
  ASSIGN_OR_RETURN(const bool run, Ready(sql));
  if (!run) return absl::OkStatus();
  NotePlanMode(sql);
  const bool in_transaction = this->in_transaction();
  const std::string text(sql);
  if (sent_ > 0) {
    if (absl::EqualsIgnoreCase(ToAbsl(sql), "COMMIT")) {
      // In the queued statements' round trip; when one of them failed, the COMMIT does not
      // run and the transaction is left to roll back.
      RETURN_IF_ERROR(SendSql(sql, in_transaction));
      return Sync(/*keep_last=*/false, in_transaction).status();
    }
    // Anything else after their outcome; a ROLLBACK even when one of them failed.
    absl::Status queued = Sync(/*keep_last=*/false, in_transaction).status();
    if (!queued.ok() && !absl::EqualsIgnoreCase(ToAbsl(sql), "ROLLBACK")) return queued;
  }
  ++round_trips_;
  const Result result(Pq().PQexec(conn_, text.c_str()));
  if (!Succeeded(result.result_)) return Failed(result.result_, in_transaction);
  return absl::OkStatus();
}

absl::StatusOr<int64_t> Connection::QueryInt(std::string_view sql,
                                             const std::vector<Value>& params) {
  ASSIGN_OR_RETURN(const Rows rows, Query(sql, params));
  if (rows.rows.empty() || rows.rows[0].empty() || !rows.rows[0][0]) {
    return absl::NotFoundError(
        absl::StrCat("no value from: ", absl::string_view(sql.data(), sql.size())));
  }
  return std::strtoll(rows.rows[0][0]->c_str(), nullptr, 10);
}

int Connection::server_version() const { return Pq().PQserverVersion(conn_); }

bool Connection::transaction_failed() const {
  return Pq().PQtransactionStatus(conn_) == PQTRANS_INERROR;
}

bool Connection::in_transaction() const {
  if (Pq().PQstatus(conn_) != CONNECTION_OK) return lost_in_transaction_;
  // Sent ahead in one (nothing else is queued), unless the last one sent is QueueCommit's.
  if (sent_ > 0) return commit_at_ != sent_ - 1;
  return Pq().PQtransactionStatus(conn_) != PQTRANS_IDLE;
}

absl::StatusOr<Transaction> Transaction::Begin(Connection& conn) {
  if (conn.in_transaction()) {
    return absl::FailedPreconditionError("a transaction is already open on this connection");
  }
  RETURN_IF_ERROR(conn.Exec("BEGIN"));
  return Transaction(conn);
}

Transaction::~Transaction() {
  // A failed rollback leaves nothing to do: a broken connection has ended the transaction.
  if (conn_ != nullptr && conn_->in_transaction()) conn_->Exec("ROLLBACK").IgnoreError();
}

absl::Status Transaction::Commit() {
  if (conn_ == nullptr) return absl::FailedPreconditionError("transaction already ended");
  // COMMIT of a failed transaction "succeeds" as a rollback.
  if (conn_->transaction_failed()) {
    return absl::AbortedError("a statement of the transaction failed; it is rolled back");
  }
  RETURN_IF_ERROR(conn_->Exec("COMMIT"));
  conn_ = nullptr;
  return absl::OkStatus();
}

}  // namespace strata::pg
