// The one read model of a job's results: what `mculab show` (gRPC GetResults) and the HTTP API's
// job document are both built from, so the two never read the same rows by different rules.
// Thread-safety: may be called from any thread (the Lab and the store may); it changes nothing.
#pragma once

#include "common/result.h"
#include "server/service/caller.h"
#include "server/service/results.h"
#include "server/service/store.h"

namespace mculab::server {

class Lab;

// The job as committed (with its queue wait), its latest run, every case with its statistics
// (stored, or computed from the raw samples for a case whose every iteration is stored while the
// run has not succeeded), checksum results, the events asked for, the run's passes, op profiles
// and memory, and, when asked, every raw sample. Errors: the job's (JobDesk::GetJob), the store's.
Result<JobResults> ReadJobResults(Lab& lab, Store& store, const Caller& caller, JobId id,
                                  bool include_samples);

}  // namespace mculab::server
