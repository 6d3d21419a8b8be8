/* The Cortex-M ports' shared timer, caches, DWT unit and park (cortex_m.h). */
#include "cortex_m.h"

#if defined(__arm__)
#define MCULAB_CM_BARRIER() __asm__ volatile("dsb\n isb" ::: "memory")
#else
#define MCULAB_CM_BARRIER() __asm__ volatile("" ::: "memory")
#endif

/* Polls of a register that should change at once; bounded so a simulated block cannot hang. */
#define MCULAB_CM_POLLS 100000u

#define SYSTICK_PERIOD (SysTick_RVR_RELOAD_Msk + 1u) /* 2^24 ticks per wrap */

static mculab_cm_regs regs;
static int use_dwt;
static mculab_cm_extend32 dwt_ext;
static volatile uint32_t systick_wraps; /* wraps since the last align, counted by the handler */
static uint64_t timer_base;             /* ticks before the last align */

void SysTick_Handler(void);
void SysTick_Handler(void) { systick_wraps = systick_wraps + 1u; }

mculab_cm_regs mculab_cm_hw(void) {
  mculab_cm_regs r = {(SysTick_Type*)MCULAB_CM_SCS_SYSTICK, (SCB_Type*)MCULAB_CM_SCS_SCB,
                      (DWT_Type*)CM7_DWT_BASE};
  return r;
}

static uint32_t irq_save(void) {
#if defined(__arm__)
  uint32_t primask;
  __asm__ volatile("mrs %0, primask\n cpsid i" : "=r"(primask)::"memory");
  return primask;
#else
  return 0;
#endif
}

static void irq_restore(uint32_t primask) {
#if defined(__arm__)
  __asm__ volatile("msr primask, %0" ::"r"(primask) : "memory");
#else
  (void)primask;
#endif
}

uint64_t mculab_cm_extend(mculab_cm_extend32* e, uint32_t raw) {
  if (raw < e->last) ++e->high;
  e->last = raw;
  return ((uint64_t)e->high << 32) | raw;
}

/* Ticks since the last align; interrupts must be masked. */
static uint64_t systick_elapsed(void) {
  SysTick_Type* st = regs.systick;
  uint32_t wraps = systick_wraps;
  uint32_t v = st->CVR;
  if (regs.scb->ICSR & SCB_ICSR_PENDSTSET_Msk) {
    /* The count reached 0 and the handler has not counted it yet: once the counter has
     * reloaded, the new period has begun. */
    const uint32_t again = st->CVR;
    if (again != 0) {
      ++wraps;
      v = again;
    } else {
      v = 0;
    }
  } else if (v == 0 && wraps > 0) {
    /* The handler counted this wrap but the counter has not reloaded yet. */
    return timer_base + (uint64_t)(wraps - 1u) * SYSTICK_PERIOD + SysTick_RVR_RELOAD_Msk;
  }
  return timer_base + (uint64_t)wraps * SYSTICK_PERIOD + (SysTick_RVR_RELOAD_Msk - v);
}

static void systick_wait_reload(void) {
  for (uint32_t i = 0; i < MCULAB_CM_POLLS && regs.systick->CVR == 0; ++i) {
  }
}

/* 1 when DWT CYCCNT counts: enabled, it must advance over a short busy loop. */
static int dwt_counts(const mculab_cm_regs* r) {
  r->scb->DEMCR |= DCB_DEMCR_TRCENA_Msk;
  r->dwt->LAR = DWT_LAR_KEY;
  if (r->dwt->CTRL & DWT_CTRL_NOCYCCNT_Msk) return 0;
  r->dwt->CYCCNT = 0;
  r->dwt->CTRL |= DWT_CTRL_CYCCNTENA_Msk;
  const uint32_t before = r->dwt->CYCCNT;
  for (volatile int i = 0; i < 100; ++i) {
  }
  return r->dwt->CYCCNT != before;
}

int mculab_cm_timer_init(const mculab_cm_regs* r) {
  regs = *r;
  dwt_ext.last = 0;
  dwt_ext.high = 0;
  use_dwt = dwt_counts(r);
  if (!use_dwt) {
    SysTick_Type* st = r->systick;
    st->CSR = 0;
    st->RVR = SysTick_RVR_RELOAD_Msk;
    st->CVR = 0;
    systick_wraps = 0;
    timer_base = 0;
    st->CSR = SysTick_CSR_CLKSOURCE_Msk | SysTick_CSR_TICKINT_Msk | SysTick_CSR_ENABLE_Msk;
    systick_wait_reload();
  }
  return use_dwt;
}

void mculab_cm_timer_align(void) {
  if (use_dwt) return;
  /* Restart the SysTick period so that its wrap interrupts (whose handler runs inside a measured
   * region) fall at the same points of every region, whatever ran before. */
  const uint32_t primask = irq_save();
  timer_base = systick_elapsed();
  regs.systick->CVR = 0;
  regs.scb->ICSR = SCB_ICSR_PENDSTCLR_Msk; /* a wrap still pending is already in timer_base */
  systick_wraps = 0;
  systick_wait_reload();
  irq_restore(primask);
}

uint64_t mculab_cm_timer_now(void) {
  if (use_dwt) return mculab_cm_extend(&dwt_ext, regs.dwt->CYCCNT);
  const uint32_t primask = irq_save();
  const uint64_t t = systick_elapsed();
  irq_restore(primask);
  return t;
}

/* ---- caches ---- */

static void dcache_by_set_way(SCB_Type* scb, volatile uint32_t* op) {
  scb->CSSELR = 0; /* level 1 data cache */
  MCULAB_CM_BARRIER();
  const uint32_t ccsidr = scb->CCSIDR;
  const uint32_t sets = (ccsidr & SCB_CCSIDR_NUMSETS_Msk) >> SCB_CCSIDR_NUMSETS_Pos;
  const uint32_t ways = (ccsidr & SCB_CCSIDR_ASSOCIATIVITY_Msk) >> SCB_CCSIDR_ASSOCIATIVITY_Pos;
  for (uint32_t s = 0; s <= sets; ++s) {
    for (uint32_t w = 0; w <= ways; ++w) {
      *op = ((s << SCB_DCISW_SET_Pos) & 0x3FE0u) | ((w << SCB_DCISW_WAY_Pos) & 0xC0000000u);
    }
  }
  MCULAB_CM_BARRIER();
}

void mculab_cm7_caches_set(const mculab_cm_regs* r, int icache, int dcache) {
  SCB_Type* scb = r->scb;
  MCULAB_CM_BARRIER();
  if (icache) {
    if (!(scb->CCR & SCB_CCR_IC_Msk)) {
      scb->ICIALLU = 0;
      MCULAB_CM_BARRIER();
      scb->CCR |= SCB_CCR_IC_Msk;
    }
  } else {
    scb->CCR &= ~SCB_CCR_IC_Msk;
    MCULAB_CM_BARRIER();
    scb->ICIALLU = 0;
  }
  MCULAB_CM_BARRIER();
  if (dcache) {
    if (!(scb->CCR & SCB_CCR_DC_Msk)) {
      dcache_by_set_way(scb, &scb->DCISW);
      scb->CCR |= SCB_CCR_DC_Msk;
    }
  } else if (scb->CCR & SCB_CCR_DC_Msk) {
    scb->CCR &= ~SCB_CCR_DC_Msk;
    MCULAB_CM_BARRIER();
    dcache_by_set_way(scb, &scb->DCCISW);
  }
  MCULAB_CM_BARRIER();
}

/* ---- the sampled DWT unit ---- */

static mculab_cm7_dwt dwt_counters;
static mculab_counter_unit dwt_unit;
static volatile int dwt_sampling;

static int dwt_select(mculab_counter_unit* u, const uint16_t* ids, unsigned n) {
  (void)u;
  return mculab_cm7_dwt_select(&dwt_counters, ids, n);
}

static void dwt_start(mculab_counter_unit* u) {
  (void)u;
  const uint32_t primask = irq_save();
  mculab_cm7_dwt_start(&dwt_counters);
  if (dwt_counters.n > 0 &&
      mculab_cm7_dwt_arm_sampler(&dwt_counters, MCULAB_CM_DWT_SAMPLE_PERIOD) == 0) {
    dwt_sampling = 1;
  }
  irq_restore(primask);
}

static void dwt_stop(mculab_counter_unit* u) {
  (void)u;
  const uint32_t primask = irq_save();
  if (dwt_sampling) mculab_cm7_dwt_disarm_sampler(&dwt_counters);
  dwt_sampling = 0;
  mculab_cm7_dwt_stop(&dwt_counters);
  irq_restore(primask);
}

static void dwt_read(mculab_counter_unit* u, uint64_t* values) {
  (void)u;
  const uint32_t primask = irq_save();
  mculab_cm7_dwt_read(&dwt_counters, values);
  irq_restore(primask);
}

mculab_counter_unit* mculab_cm_dwt_unit_init(const mculab_cm_regs* r) {
  dwt_sampling = 0;
  if (r->scb->DHCSR & DCB_DHCSR_C_DEBUGEN_Msk) return NULL;
  if (((r->dwt->CTRL & DWT_CTRL_NUMCOMP_Msk) >> DWT_CTRL_NUMCOMP_Pos) == 0) return NULL;
  const mculab_counter_unit* inner = mculab_cm7_dwt_init(&dwt_counters, r->dwt, &r->scb->DEMCR);
  if (inner == NULL) return NULL;
  dwt_unit = *inner;
  dwt_unit.select = dwt_select;
  dwt_unit.start = dwt_start;
  dwt_unit.stop = dwt_stop;
  dwt_unit.read = dwt_read;
  dwt_unit.driver = &dwt_counters;
  return &dwt_unit;
}

void mculab_cm_dwt_on_debug_monitor(void) {
  if (dwt_sampling) mculab_cm7_dwt_on_sample(&dwt_counters);
}

void mculab_cm_append(char* buf, size_t size, const char* s) {
  size_t n = 0;
  while (n < size && buf[n] != 0) ++n;
  while (*s && n + 1 < size) buf[n++] = *s++;
  if (n < size) buf[n] = 0;
}

/* ---- park ---- */

void mculab_cm_park(void) {
#if defined(__arm__)
  __asm__ volatile("cpsid i" ::: "memory");
  ((SysTick_Type*)MCULAB_CM_SCS_SYSTICK)->CSR = 0;
  for (;;) __asm__ volatile("wfi");
#else
  for (;;) {
  }
#endif
}
