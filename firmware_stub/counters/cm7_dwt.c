/* Cortex-M7 DWT profiling counters: 8-bit counters extended by sampling (cm7_dwt.h). */
#include "cm7_dwt.h"

const mculab_event mculab_cortex_m7_dwt_events[] = {
    {"cpi", MCULAB_DWT_CPI}, {"exc", MCULAB_DWT_EXC},   {"sleep", MCULAB_DWT_SLEEP},
    {"lsu", MCULAB_DWT_LSU}, {"fold", MCULAB_DWT_FOLD},
};
const uint8_t mculab_cortex_m7_dwt_num_events =
    (uint8_t)(sizeof mculab_cortex_m7_dwt_events / sizeof mculab_cortex_m7_dwt_events[0]);

static const uint32_t kEnableBit[MCULAB_DWT_NUM_COUNTERS] = {
    DWT_CTRL_CPIEVTENA_Msk, DWT_CTRL_EXCEVTENA_Msk,  DWT_CTRL_SLEEPEVTENA_Msk,
    DWT_CTRL_LSUEVTENA_Msk, DWT_CTRL_FOLDEVTENA_Msk,
};
static const uint32_t kAllEnableBits = DWT_CTRL_CPIEVTENA_Msk | DWT_CTRL_EXCEVTENA_Msk |
                                       DWT_CTRL_SLEEPEVTENA_Msk | DWT_CTRL_LSUEVTENA_Msk |
                                       DWT_CTRL_FOLDEVTENA_Msk;

static volatile uint32_t* counter_reg(DWT_Type* r, unsigned id) {
  switch (id) {
    case MCULAB_DWT_CPI:
      return &r->CPICNT;
    case MCULAB_DWT_EXC:
      return &r->EXCCNT;
    case MCULAB_DWT_SLEEP:
      return &r->SLEEPCNT;
    case MCULAB_DWT_LSU:
      return &r->LSUCNT;
    default:
      return &r->FOLDCNT;
  }
}

static int unit_select(mculab_counter_unit* u, const uint16_t* ids, unsigned n) {
  return mculab_cm7_dwt_select((mculab_cm7_dwt*)u->driver, ids, n);
}
static void unit_start(mculab_counter_unit* u) { mculab_cm7_dwt_start((mculab_cm7_dwt*)u->driver); }
static void unit_stop(mculab_counter_unit* u) { mculab_cm7_dwt_stop((mculab_cm7_dwt*)u->driver); }
static void unit_read(mculab_counter_unit* u, uint64_t* v) {
  mculab_cm7_dwt_read((mculab_cm7_dwt*)u->driver, v);
}

mculab_counter_unit* mculab_cm7_dwt_init(mculab_cm7_dwt* d, DWT_Type* regs,
                                         volatile uint32_t* demcr) {
  d->regs = regs;
  d->demcr = demcr;
  d->n = 0;
  d->enable_bits = 0;
  d->period = 0;
  *demcr |= DCB_DEMCR_TRCENA_Msk;
  regs->LAR = DWT_LAR_KEY;
  if (regs->CTRL & DWT_CTRL_NOPRFCNT_Msk) return NULL;
  regs->CTRL &= ~kAllEnableBits;
  mculab_counter_unit* u = &d->unit;
  u->name = "cortex-m7-dwt";
  u->max_simultaneous = MCULAB_DWT_NUM_COUNTERS;
  u->flags = 0;
  u->num_events = mculab_cortex_m7_dwt_num_events;
  u->events = mculab_cortex_m7_dwt_events;
  u->select = unit_select;
  u->start = unit_start;
  u->stop = unit_stop;
  u->read = unit_read;
  u->driver = d;
  return u;
}

int mculab_cm7_dwt_select(mculab_cm7_dwt* d, const uint16_t* ids, unsigned n) {
  if (n > MCULAB_DWT_NUM_COUNTERS) return -1;
  uint32_t bits = 0;
  for (unsigned k = 0; k < n; ++k) {
    if (ids[k] >= MCULAB_DWT_NUM_COUNTERS || (bits & kEnableBit[ids[k]])) return -1;
    bits |= kEnableBit[ids[k]];
  }
  d->regs->CTRL &= ~kAllEnableBits;
  for (unsigned k = 0; k < n; ++k) d->sel[k] = (uint8_t)ids[k];
  d->n = (uint8_t)n;
  d->enable_bits = bits;
  return 0;
}

void mculab_cm7_dwt_start(mculab_cm7_dwt* d) {
  DWT_Type* r = d->regs;
  r->CTRL &= ~kAllEnableBits;
  for (unsigned k = 0; k < d->n; ++k) {
    const unsigned id = d->sel[k];
    *counter_reg(r, id) = 0;
    d->last[id] = 0;
    d->total[id] = 0;
  }
  r->CTRL |= d->enable_bits;
}

void mculab_cm7_dwt_stop(mculab_cm7_dwt* d) {
  d->regs->CTRL &= ~d->enable_bits;
  mculab_cm7_dwt_sample(d);
}

void mculab_cm7_dwt_sample(mculab_cm7_dwt* d) {
  for (unsigned k = 0; k < d->n; ++k) {
    const unsigned id = d->sel[k];
    const uint8_t now = (uint8_t)(*counter_reg(d->regs, id) & DWT_CPICNT_CPICNT_Msk);
    d->total[id] += (uint8_t)(now - d->last[id]); /* mod 256: at most one wrap since `last` */
    d->last[id] = now;
  }
}

void mculab_cm7_dwt_read(mculab_cm7_dwt* d, uint64_t* values) {
  mculab_cm7_dwt_sample(d);
  for (unsigned k = 0; k < d->n; ++k) values[k] = d->total[d->sel[k]];
}

int mculab_cm7_dwt_arm_sampler(mculab_cm7_dwt* d, uint32_t period) {
  DWT_Type* r = d->regs;
  if (period == 0 || period > 255u) return -1;
  if (((r->CTRL & DWT_CTRL_NUMCOMP_Msk) >> DWT_CTRL_NUMCOMP_Pos) == 0) return -1;
  d->period = period;
  r->FUNCTION0 = 0;
  r->MASK0 = 0;
  r->COMP0 = r->CYCCNT + period;
  r->FUNCTION0 = DWT_FUNCTION_CYCMATCH_Msk | DWT_FUNCTION_WATCHPOINT_PC_OR_CYCCNT;
  *d->demcr |= DCB_DEMCR_MON_EN_Msk;
  return 0;
}

void mculab_cm7_dwt_disarm_sampler(mculab_cm7_dwt* d) {
  d->regs->FUNCTION0 = 0;
  *d->demcr &= ~DCB_DEMCR_MON_EN_Msk;
  d->period = 0;
}

void mculab_cm7_dwt_on_sample(mculab_cm7_dwt* d) {
  mculab_cm7_dwt_sample(d);
  (void)d->regs->FUNCTION0; /* reading DWT_FUNCTION0 clears MATCHED */
  d->regs->COMP0 += d->period;
}
