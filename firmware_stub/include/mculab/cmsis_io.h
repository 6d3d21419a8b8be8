/* CMSIS's register access qualifiers (core_cm*.h), for the register blocks the runner declares
 * itself: __IM read-only, __OM write-only, __IOM read-write. Defined only where CMSIS is not
 * included first. */
#ifndef MCULAB_CMSIS_IO_H_
#define MCULAB_CMSIS_IO_H_

#ifndef __IM
#define __IM volatile const
#endif
#ifndef __OM
#define __OM volatile
#endif
#ifndef __IOM
#define __IOM volatile
#endif

#endif /* MCULAB_CMSIS_IO_H_ */
