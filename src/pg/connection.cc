#include "pg/connection.h"

#include <dlfcn.h>
#include <libpq-fe.h>

#include <cstdlib>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "util/status_macros.h"

namespace strata::pg {
namespace {

// libpq, loaded when the first connection opens rather than linked: linked, it and the
// libraries it needs (TLS, Kerberos, LDAP, SASL, ...) were loaded by every start of the
// server, which never connects to PostgreSQL, and cost its cold start ~20 ms.
struct LibPq {
  decltype(&::PQclear) PQclear = nullptr;
  decltype(&::PQcmdTuples) PQcmdTuples = nullptr;
  decltype(&::PQconnectdb) PQconnectdb = nullptr;
  decltype(&::PQconninfoFree) PQconninfoFree = nullptr;
  decltype(&::PQconninfoParse) PQconninfoParse = nullptr;
  decltype(&::PQerrorMessage) PQerrorMessage = nullptr;
  decltype(&::PQexec) PQexec = nullptr;
  decltype(&::PQexecParams) PQexecParams = nullptr;
  decltype(&::PQfinish) PQfinish = nullptr;
  decltype(&::PQfname) PQfname = nullptr;
  decltype(&::PQfreemem) PQfreemem = nullptr;
  decltype(&::PQgetisnull) PQgetisnull = nullptr;
  decltype(&::PQgetlength) PQgetlength = nullptr;
  decltype(&::PQgetvalue) PQgetvalue = nullptr;
  decltype(&::PQnfields) PQnfields = nullptr;
  decltype(&::PQntuples) PQntuples = nullptr;
  decltype(&::PQresultErrorField) PQresultErrorField = nullptr;
  decltype(&::PQresultErrorMessage) PQresultErrorMessage = nullptr;
  decltype(&::PQresultStatus) PQresultStatus = nullptr;
  decltype(&::PQserverVersion) PQserverVersion = nullptr;
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
    get(l.PQconnectdb, "PQconnectdb");
    get(l.PQconninfoFree, "PQconninfoFree");
    get(l.PQconninfoParse, "PQconninfoParse");
    get(l.PQerrorMessage, "PQerrorMessage");
    get(l.PQexec, "PQexec");
    get(l.PQexecParams, "PQexecParams");
    get(l.PQfinish, "PQfinish");
    get(l.PQfname, "PQfname");
    get(l.PQfreemem, "PQfreemem");
    get(l.PQgetisnull, "PQgetisnull");
    get(l.PQgetlength, "PQgetlength");
    get(l.PQgetvalue, "PQgetvalue");
    get(l.PQnfields, "PQnfields");
    get(l.PQntuples, "PQntuples");
    get(l.PQresultErrorField, "PQresultErrorField");
    get(l.PQresultErrorMessage, "PQresultErrorMessage");
    get(l.PQresultStatus, "PQresultStatus");
    get(l.PQserverVersion, "PQserverVersion");
    get(l.PQsetNoticeProcessor, "PQsetNoticeProcessor");
    get(l.PQstatus, "PQstatus");
    get(l.PQtransactionStatus, "PQtransactionStatus");
    return l;
  }();
  return pq;
}

// libpq's messages end with a newline.
std::string Message(const char* text) {
  return std::string(absl::StripTrailingAsciiWhitespace(text ? text : ""));
}

// The server's error as a status, by the class of its SQLSTATE.
absl::Status StatusOf(PGconn* conn, const PGresult* result) {
  const std::string message =
      Message(result ? Pq().PQresultErrorMessage(result) : Pq().PQerrorMessage(conn));
  if (Pq().PQstatus(conn) != CONNECTION_OK) return absl::UnavailableError(message);
  const char* state = result ? Pq().PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  const std::string_view code = state ? state : "";
  if (code.substr(0, 2) == "08" || code.substr(0, 2) == "57") {
    return absl::UnavailableError(message);  // Connection exception, operator intervention.
  }
  if (code == "40001" || code == "40P01") return absl::AbortedError(message);
  if (code.substr(0, 2) == "23") return absl::FailedPreconditionError(message);
  if (code.substr(0, 2) == "42" || code.substr(0, 2) == "22") {
    return absl::InvalidArgumentError(message);
  }
  return absl::InternalError(message);
}

struct ResultDeleter {
  void operator()(PGresult* r) const { Pq().PQclear(r); }
};
using Result = std::unique_ptr<PGresult, ResultDeleter>;

}  // namespace

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
  PGconn* conn = Pq().PQconnectdb(uri.c_str());
  if (conn == nullptr) return absl::ResourceExhaustedError("libpq: out of memory");
  if (Pq().PQstatus(conn) != CONNECTION_OK) {
    const std::string message = Message(Pq().PQerrorMessage(conn));
    Pq().PQfinish(conn);
    return absl::UnavailableError(absl::StrCat("PostgreSQL unreachable: ", message));
  }
  // Our statements' notices (e.g. "relation already exists, skipping") are not for stderr.
  Pq().PQsetNoticeProcessor(
      conn, [](void*, const char*) {}, nullptr);
  return std::unique_ptr<Connection>(new Connection(conn));
}

Connection::~Connection() { Pq().PQfinish(conn_); }

absl::StatusOr<Rows> Connection::Query(std::string_view sql, const std::vector<Value>& params) {
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const Value& v : params) values.push_back(v ? v->c_str() : nullptr);
  const std::string text(sql);
  Result result(Pq().PQexecParams(conn_, text.c_str(), static_cast<int>(params.size()), nullptr,
                                  values.data(), nullptr, nullptr, /*resultFormat=*/0));
  const ExecStatusType status = result ? Pq().PQresultStatus(result.get()) : PGRES_FATAL_ERROR;
  if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
    return StatusOf(conn_, result.get());
  }
  Rows rows;
  const int columns = Pq().PQnfields(result.get());
  for (int c = 0; c < columns; ++c) rows.columns.emplace_back(Pq().PQfname(result.get(), c));
  const int n = Pq().PQntuples(result.get());
  rows.rows.reserve(n);
  for (int r = 0; r < n; ++r) {
    std::vector<Value>& row = rows.rows.emplace_back();
    row.reserve(columns);
    for (int c = 0; c < columns; ++c) {
      if (Pq().PQgetisnull(result.get(), r, c)) {
        row.emplace_back();
      } else {
        row.emplace_back(
            std::string(Pq().PQgetvalue(result.get(), r, c), Pq().PQgetlength(result.get(), r, c)));
      }
    }
  }
  if (const char* tuples = Pq().PQcmdTuples(result.get()); tuples && *tuples) {
    rows.affected = std::strtoll(tuples, nullptr, 10);
  }
  return rows;
}

absl::Status Connection::Exec(std::string_view sql) {
  const std::string text(sql);
  Result result(Pq().PQexec(conn_, text.c_str()));
  const ExecStatusType status = result ? Pq().PQresultStatus(result.get()) : PGRES_FATAL_ERROR;
  if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
    return StatusOf(conn_, result.get());
  }
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

bool Connection::in_transaction() const { return Pq().PQtransactionStatus(conn_) != PQTRANS_IDLE; }

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
