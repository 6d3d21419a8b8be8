# Generates a .cc holding every migration's SQL (run at build time: cmake -P).
# Inputs: OUT (the .cc to write), FILES (the .sql files, ;-separated), FUNCTION (the function that
# returns them, declared in db/migrations.h). A file's version is the
# number its name starts with (0001_initial.sql -> 1); versions must increase, no repeats. A gap is
# allowed while parallel branches own the numbers between (each branch was given its number): they
# are all merged before a release, so no database is ever migrated across a gap.
list(SORT FILES)
set(body "")
set(expected 1)
foreach(f ${FILES})
  get_filename_component(name ${f} NAME)
  if(NOT name MATCHES "^([0-9]+)_.*\\.sql$")
    message(FATAL_ERROR "migration ${name}: the name must start with its number, e.g. 0002_x.sql")
  endif()
  math(EXPR version "${CMAKE_MATCH_1}")
  if(version LESS expected)
    message(FATAL_ERROR "migration ${name}: expected a number >= ${expected} (no repeats)")
  endif()
  math(EXPR expected "${version} + 1")
  file(READ ${f} sql)
  string(FIND "${sql}" ")mculab_sql\"" bad)
  if(NOT bad EQUAL -1)
    message(FATAL_ERROR "migration ${name} contains the raw-string delimiter")
  endif()
  string(APPEND body "      {${version}, \"${name}\", R\"mculab_sql(${sql})mculab_sql\"},\n")
endforeach()
file(WRITE ${OUT}.tmp "// Generated from db/migrations/ by db/embed_migrations.cmake. Do not edit.
#include \"db/migrations.h\"

namespace mculab::db {

const std::vector<Migration>& ${FUNCTION}() {
  static const std::vector<Migration> kMigrations = {
${body}  };
  return kMigrations;
}

}  // namespace mculab::db
")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.tmp)
