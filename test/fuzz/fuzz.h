/* fuzz.h - what every libFuzzer target in test/fuzz shares: the entry
 * point's prototype and CHECK(), which abort()s on a broken invariant so
 * that libFuzzer keeps the input as a reproducer. */
#ifndef MRCD_FUZZ_H
#define MRCD_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                               \
	do {                                                                   \
		if (!(c))                                                      \
			abort();                                               \
	} while (0)

#endif
