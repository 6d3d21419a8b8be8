// Reading a statement's rows, for either store's statements (db/sql_statement.h's Use,
// db/pg_statement.h's PgUse: Next() steps, status() reports an error). db-internal.
#pragma once

#include <type_traits>
#include <utility>
#include <vector>

#include "common/result.h"

namespace mculab::db {

template <typename T>
struct RowValue {
  using type = T;
};
template <typename T>
struct RowValue<Result<T>> {
  using type = T;
};

// Every remaining row of `u`, each read by `row` (returning a value or a Result of one).
template <typename U, typename F>
Result<std::vector<typename RowValue<std::invoke_result_t<F&, U&>>::type>> AllRows(U& u, F&& row) {
  using R = std::invoke_result_t<F&, U&>;
  std::vector<typename RowValue<R>::type> out;
  while (u.Next()) {
    if constexpr (std::is_same_v<R, typename RowValue<R>::type>) {
      out.push_back(row(u));
    } else {
      auto r = row(u);
      if (!r.ok()) return r.error();
      out.push_back(std::move(*r));
    }
  }
  if (!u.status().ok()) return u.status().error();
  return out;
}

// The next row of `u` read by `row`, or `none` when there is none.
template <typename T, typename U, typename F>
Result<T> FirstRow(U& u, F&& row, Result<T> none) {
  if (!u.Next()) {
    if (!u.status().ok()) return u.status().error();
    return none;
  }
  return row(u);
}

}  // namespace mculab::db
