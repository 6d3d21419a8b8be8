/* Ethos-U55/U65 PMU driver: 4 event counters + the 48-bit cycle counter (ethosu_pmu.h). */
#include "ethosu_pmu.h"

const mculab_event mculab_ethosu_events[] = {
    {"npu_active", ETHOSU_PMU_NPU_ACTIVE},
    {"npu_idle", ETHOSU_PMU_NPU_IDLE},
    {"mac_active", ETHOSU_PMU_MAC_ACTIVE},
    {"mac_active_8bit", ETHOSU_PMU_MAC_ACTIVE_8BIT},
    {"mac_active_16bit", ETHOSU_PMU_MAC_ACTIVE_16BIT},
    {"mac_stalled_by_wd", ETHOSU_PMU_MAC_STALLED_BY_WD},
    {"ao_active", ETHOSU_PMU_AO_ACTIVE},
    {"wd_active", ETHOSU_PMU_WD_ACTIVE},
    {"wd_stalled", ETHOSU_PMU_WD_STALLED},
    {"axi0_rd", ETHOSU_PMU_AXI0_RD_DATA_BEAT_RECEIVED},
    {"axi0_wr", ETHOSU_PMU_AXI0_WR_DATA_BEAT_WRITTEN},
    {"axi0_rd_stalled", ETHOSU_PMU_AXI0_RD_TRAN_REQ_STALLED},
    {"axi1_rd", ETHOSU_PMU_AXI1_RD_DATA_BEAT_RECEIVED},
    {"axi1_wr", ETHOSU_PMU_AXI1_WR_DATA_BEAT_WRITTEN},
};
const uint8_t mculab_ethosu_num_events =
    (uint8_t)(sizeof mculab_ethosu_events / sizeof mculab_ethosu_events[0]);
const mculab_event mculab_ethosu_cycle_events[] = {{"npu_cycles", ETHOSU_PMU_NPU_CYCLES}};

static int ev_select(mculab_counter_unit* u, const uint16_t* ids, unsigned n) {
  return mculab_ethosu_pmu_select((mculab_ethosu_pmu*)u->driver, ids, n);
}
static void ev_start(mculab_counter_unit* u) {
  mculab_ethosu_pmu_start((mculab_ethosu_pmu*)u->driver);
}
static void ev_stop(mculab_counter_unit* u) {
  mculab_ethosu_pmu_stop((mculab_ethosu_pmu*)u->driver);
}
static void ev_read(mculab_counter_unit* u, uint64_t* v) {
  mculab_ethosu_pmu_read((mculab_ethosu_pmu*)u->driver, v);
}
static int cc_select(mculab_counter_unit* u, const uint16_t* ids, unsigned n) {
  return mculab_ethosu_ccnt_select((mculab_ethosu_pmu*)u->driver, ids, n);
}
static void cc_start(mculab_counter_unit* u) {
  mculab_ethosu_ccnt_start((mculab_ethosu_pmu*)u->driver);
}
static void cc_stop(mculab_counter_unit* u) {
  mculab_ethosu_ccnt_stop((mculab_ethosu_pmu*)u->driver);
}
static void cc_read(mculab_counter_unit* u, uint64_t* v) {
  mculab_ethosu_pmu* d = (mculab_ethosu_pmu*)u->driver;
  if (d->cycles) v[0] = mculab_ethosu_ccnt_read(d);
}

static uint32_t events_mask(unsigned n) { return (1u << n) - 1u; }

int mculab_ethosu_pmu_init(mculab_ethosu_pmu* d, NPU_Type* regs) {
  d->regs = regs;
  d->n = 0;
  d->cycles = 0;
  d->ccnt_high = 0;
  d->num_counters = 0;
  const uint32_t id = regs->ID;
  if (id == 0u || id == 0xFFFFFFFFu ||
      ((id & NPU_ID_ARCH_MAJOR_REV_Msk) >> NPU_ID_ARCH_MAJOR_REV_Pos) != 1u) {
    return -1;
  }
  unsigned counters = (regs->PMCR & NPU_PMCR_NUM_EVENT_CNT_Msk) >> NPU_PMCR_NUM_EVENT_CNT_Pos;
  if (counters > ETHOSU_PMU_NUM_EVENTCNT) counters = ETHOSU_PMU_NUM_EVENTCNT;
  if (counters == 0) return -1;
  d->num_counters = (uint8_t)counters;
  const uint32_t all = events_mask(counters) | NPU_PMU_CYCLE_CNT_Msk;
  regs->PMCNTENCLR = all;
  regs->PMINTCLR = all;
  regs->PMOVSCLR = all;
  regs->PMCCNTR_CFG = 0; /* count every NPU cycle: no start/stop events */
  regs->PMCR = NPU_PMCR_CNT_EN_Msk;

  mculab_counter_unit* u = &d->events_unit;
  u->name = "ethos-u-pmu";
  u->max_simultaneous = d->num_counters;
  u->flags = 0;
  u->num_events = mculab_ethosu_num_events;
  u->events = mculab_ethosu_events;
  u->select = ev_select;
  u->start = ev_start;
  u->stop = ev_stop;
  u->read = ev_read;
  u->driver = d;
  u = &d->cycles_unit;
  u->name = "ethos-u-ccnt";
  u->max_simultaneous = 1;
  u->flags = 0;
  u->num_events = 1;
  u->events = mculab_ethosu_cycle_events;
  u->select = cc_select;
  u->start = cc_start;
  u->stop = cc_stop;
  u->read = cc_read;
  u->driver = d;
  return 0;
}

const char* mculab_ethosu_product(const mculab_ethosu_pmu* d) {
  switch ((d->regs->CONFIG & NPU_CONFIG_PRODUCT_Msk) >> NPU_CONFIG_PRODUCT_Pos) {
    case 0:
      return "ethos-u55";
    case 1:
      return "ethos-u65";
  }
  return "ethos-u";
}

int mculab_ethosu_pmu_select(mculab_ethosu_pmu* d, const uint16_t* events, unsigned n) {
  if (n > d->num_counters) return -1;
  for (unsigned k = 0; k < n; ++k) {
    if (events[k] > NPU_PMEVTYPER_EV_TYPE_Msk) return -1;
  }
  d->regs->PMCNTENCLR = events_mask(d->num_counters);
  for (unsigned k = 0; k < n; ++k) d->regs->PMEVTYPER[k] = events[k];
  d->n = (uint8_t)n;
  return 0;
}

void mculab_ethosu_pmu_start(mculab_ethosu_pmu* d) {
  NPU_Type* r = d->regs;
  const uint32_t mask = events_mask(d->n);
  r->PMCNTENCLR = mask;
  for (unsigned k = 0; k < d->n; ++k) {
    r->PMEVCNTR[k] = 0;
    d->high[k] = 0;
  }
  r->PMOVSCLR = mask;
  r->PMCNTENSET = mask;
}

void mculab_ethosu_pmu_stop(mculab_ethosu_pmu* d) { d->regs->PMCNTENCLR = events_mask(d->n); }

void mculab_ethosu_pmu_read(mculab_ethosu_pmu* d, uint64_t* values) {
  NPU_Type* r = d->regs;
  for (unsigned k = 0; k < d->n; ++k) {
    const uint32_t flag = NPU_PMU_EVENT_CNT_Msk(k);
    uint32_t before, after, v;
    do { /* a wrap between the flag reads makes `v` ambiguous: read again */
      before = r->PMOVSSET & flag;
      v = r->PMEVCNTR[k];
      after = r->PMOVSSET & flag;
    } while (before != after);
    if (after) {
      r->PMOVSCLR = flag;
      ++d->high[k];
    }
    values[k] = ((uint64_t)d->high[k] << 32) | v;
  }
}

int mculab_ethosu_ccnt_select(mculab_ethosu_pmu* d, const uint16_t* events, unsigned n) {
  if (n > 1 || (n == 1 && events[0] != ETHOSU_PMU_NPU_CYCLES)) return -1;
  d->regs->PMCNTENCLR = NPU_PMU_CYCLE_CNT_Msk;
  d->cycles = (uint8_t)n;
  return 0;
}

void mculab_ethosu_ccnt_start(mculab_ethosu_pmu* d) {
  if (!d->cycles) return;
  NPU_Type* r = d->regs;
  r->PMCNTENCLR = NPU_PMU_CYCLE_CNT_Msk;
  r->PMCCNTR_LO = 0;
  r->PMCCNTR_HI = 0;
  r->PMOVSCLR = NPU_PMU_CYCLE_CNT_Msk;
  d->ccnt_high = 0;
  r->PMCNTENSET = NPU_PMU_CYCLE_CNT_Msk;
}

void mculab_ethosu_ccnt_stop(mculab_ethosu_pmu* d) {
  if (d->cycles) d->regs->PMCNTENCLR = NPU_PMU_CYCLE_CNT_Msk;
}

/* 48 bits: HI, LO, HI again (a carry between the HI reads means LO wrapped: read LO again). */
static uint64_t ccnt48(NPU_Type* r) {
  uint32_t hi = r->PMCCNTR_HI & NPU_PMCCNTR_HI_Msk;
  uint32_t lo = r->PMCCNTR_LO;
  const uint32_t hi2 = r->PMCCNTR_HI & NPU_PMCCNTR_HI_Msk;
  if (hi2 != hi) {
    hi = hi2;
    lo = r->PMCCNTR_LO;
  }
  return ((uint64_t)hi << 32) | lo;
}

uint64_t mculab_ethosu_ccnt_read(mculab_ethosu_pmu* d) {
  NPU_Type* r = d->regs;
  uint32_t before, after;
  uint64_t v;
  do {
    before = r->PMOVSSET & NPU_PMU_CYCLE_CNT_Msk;
    v = ccnt48(r);
    after = r->PMOVSSET & NPU_PMU_CYCLE_CNT_Msk;
  } while (before != after);
  if (after) {
    r->PMOVSCLR = NPU_PMU_CYCLE_CNT_Msk;
    ++d->ccnt_high;
  }
  return ((uint64_t)d->ccnt_high << 48) | v;
}
