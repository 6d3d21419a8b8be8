/* Armv8.1-M PMU driver: chained 32-bit pairs extended to 64 bits (armv81m_pmu.h). */
#include "armv81m_pmu.h"

/* Catalogue names are the lab's; ids are Arm's. `loads`/`stores` count instructions (LD_RETIRED,
 * ST_RETIRED: "memory-reading/-writing instruction architecturally executed"), not accesses. */
const mculab_event mculab_cortex_m55_events[] = {
    {"instructions", ARM_PMU_INST_RETIRED},
    {"loads", ARM_PMU_LD_RETIRED},
    {"stores", ARM_PMU_ST_RETIRED},
    {"branches", ARM_PMU_BR_RETIRED},
    {"mve_instructions", ARM_PMU_MVE_INST_RETIRED},
    {"mem_access", ARM_PMU_MEM_ACCESS},
    {"l1d_cache", ARM_PMU_L1D_CACHE},
    {"l1d_cache_refill", ARM_PMU_L1D_CACHE_REFILL},
    {"l1i_cache_refill", ARM_PMU_L1I_CACHE_REFILL},
    {"br_mis_pred", ARM_PMU_BR_MIS_PRED},
    {"stall", ARM_PMU_STALL},
    {"exc_taken", ARM_PMU_EXC_TAKEN},
    {"mve_ldst", ARM_PMU_MVE_LDST_RETIRED},
    {"mve_int_mac", ARM_PMU_MVE_INT_MAC_RETIRED},
    {"pmu_cycles", ARM_PMU_CPU_CYCLES},
};
const uint8_t mculab_cortex_m55_num_events =
    (uint8_t)(sizeof mculab_cortex_m55_events / sizeof mculab_cortex_m55_events[0]);

static int unit_select(mculab_counter_unit* u, const uint16_t* ids, unsigned n) {
  return mculab_armv81m_pmu_select((mculab_armv81m_pmu*)u->driver, ids, n);
}
static void unit_start(mculab_counter_unit* u) {
  mculab_armv81m_pmu_start((mculab_armv81m_pmu*)u->driver);
}
static void unit_stop(mculab_counter_unit* u) {
  mculab_armv81m_pmu_stop((mculab_armv81m_pmu*)u->driver);
}
static void unit_read(mculab_counter_unit* u, uint64_t* v) {
  mculab_armv81m_pmu_read((mculab_armv81m_pmu*)u->driver, v);
}

static uint32_t all_counters_mask(const mculab_armv81m_pmu* d) {
  return ((1u << (2u * d->num_pairs)) - 1u) | PMU_CNTENCLR_CCNTR_ENABLE_Msk;
}

mculab_counter_unit* mculab_armv81m_pmu_init(mculab_armv81m_pmu* d, PMU_Type* regs,
                                             volatile uint32_t* demcr, int secure) {
  d->regs = regs;
  d->demcr = demcr;
  d->n = 0;
  d->pair_mask = 0;
  d->ccntr_high = 0;
  d->num_pairs = 0;
  *demcr |= DCB_DEMCR_TRCENA_Msk;
  const uint32_t type = regs->TYPE;
  unsigned counters = (type & PMU_TYPE_NUM_CNTS_Msk) >> PMU_TYPE_NUM_CNTS_Pos;
  if (counters > ARMV81M_PMU_NUM_EVENTCNT) counters = ARMV81M_PMU_NUM_EVENTCNT;
  const uint32_t auth = regs->AUTHSTATUS;
  const uint32_t nid = secure ? (auth & PMU_AUTHSTATUS_SNID_Msk) >> PMU_AUTHSTATUS_SNID_Pos
                              : (auth & PMU_AUTHSTATUS_NSNID_Msk) >> PMU_AUTHSTATUS_NSNID_Pos;
  if (counters < 2 || nid != 3u) return NULL;
  d->num_pairs = (uint8_t)(counters / 2u);
  regs->CNTENCLR = all_counters_mask(d);
  regs->INTENCLR = all_counters_mask(d);
  regs->OVSCLR = all_counters_mask(d);
  regs->CTRL = PMU_CTRL_ENABLE_Msk;

  mculab_counter_unit* u = &d->unit;
  u->name = "cortex-m55-pmu";
  u->max_simultaneous = d->num_pairs;
  u->flags = 0;
  u->num_events = mculab_cortex_m55_num_events;
  u->events = mculab_cortex_m55_events;
  u->select = unit_select;
  u->start = unit_start;
  u->stop = unit_stop;
  u->read = unit_read;
  u->driver = d;
  return u;
}

int mculab_armv81m_pmu_select(mculab_armv81m_pmu* d, const uint16_t* events, unsigned n) {
  if (n > d->num_pairs) return -1;
  for (unsigned k = 0; k < n; ++k) {
    if (events[k] == ARM_PMU_CHAIN) return -1; /* the pairs use it themselves */
  }
  d->regs->CNTENCLR = all_counters_mask(d) & ~PMU_CNTENCLR_CCNTR_ENABLE_Msk;
  d->pair_mask = 0;
  for (unsigned k = 0; k < n; ++k) {
    d->regs->EVTYPER[2 * k] = events[k] & PMU_EVTYPER_EVENTTOCNT_Msk;
    d->regs->EVTYPER[2 * k + 1] = ARM_PMU_CHAIN;
    d->pair_mask |= 3u << (2 * k);
  }
  d->n = (uint8_t)n;
  return 0;
}

void mculab_armv81m_pmu_start(mculab_armv81m_pmu* d) {
  PMU_Type* r = d->regs;
  r->CNTENCLR = d->pair_mask;
  for (unsigned k = 0; k < d->n; ++k) {
    r->EVCNTR[2 * k] = 0;
    r->EVCNTR[2 * k + 1] = 0;
    d->high[k] = 0;
  }
  r->OVSCLR = d->pair_mask;
  /* One write starts every counter at once, both halves of each pair together. */
  r->CNTENSET = d->pair_mask;
}

void mculab_armv81m_pmu_stop(mculab_armv81m_pmu* d) { d->regs->CNTENCLR = d->pair_mask; }

/* One pair's 32 bits: odd counter (high half), even (low), odd again; a carry between the two
 * reads of the odd counter means the low half wrapped in between, so the low half is read again. */
static uint32_t pair_value(PMU_Type* r, unsigned k) {
  uint32_t hi = r->EVCNTR[2 * k + 1] & PMU_EVCNTR_CNT_Msk;
  uint32_t lo = r->EVCNTR[2 * k] & PMU_EVCNTR_CNT_Msk;
  const uint32_t hi2 = r->EVCNTR[2 * k + 1] & PMU_EVCNTR_CNT_Msk;
  if (hi2 != hi) {
    hi = hi2;
    lo = r->EVCNTR[2 * k] & PMU_EVCNTR_CNT_Msk;
  }
  return (hi << 16) | lo;
}

void mculab_armv81m_pmu_read(mculab_armv81m_pmu* d, uint64_t* values) {
  PMU_Type* r = d->regs;
  for (unsigned k = 0; k < d->n; ++k) {
    const uint32_t flag = 1u << (2 * k + 1); /* the odd counter's overflow: the pair wrapped */
    uint32_t before, after, v;
    do { /* a wrap between the flag reads makes `v` ambiguous: read again */
      before = r->OVSSET & flag;
      v = pair_value(r, k);
      after = r->OVSSET & flag;
    } while (before != after);
    if (after) {
      r->OVSCLR = flag;
      ++d->high[k];
    }
    values[k] = ((uint64_t)d->high[k] << 32) | v;
  }
}

void mculab_armv81m_pmu_ccntr_start(mculab_armv81m_pmu* d) {
  PMU_Type* r = d->regs;
  r->CNTENCLR = PMU_CNTENCLR_CCNTR_ENABLE_Msk;
  r->CCNTR = 0;
  r->OVSCLR = PMU_OVSCLR_CYCCNT_STATUS_Msk;
  d->ccntr_high = 0;
  r->CNTENSET = PMU_CNTENSET_CCNTR_ENABLE_Msk;
}

uint64_t mculab_armv81m_pmu_ccntr_read(mculab_armv81m_pmu* d) {
  PMU_Type* r = d->regs;
  uint32_t before, after, v;
  do {
    before = r->OVSSET & PMU_OVSSET_CYCCNT_STATUS_Msk;
    v = r->CCNTR;
    after = r->OVSSET & PMU_OVSSET_CYCCNT_STATUS_Msk;
  } while (before != after);
  if (after) {
    r->OVSCLR = PMU_OVSCLR_CYCCNT_STATUS_Msk;
    ++d->ccntr_high;
  }
  return ((uint64_t)d->ccntr_high << 32) | v;
}
