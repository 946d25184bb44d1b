/* test_mpi.c - a small MPI program for Open MPI over the "mrc" provider
 * (pml cm, mtl ofi), run with two ranks by test/integration/libfabric.sh
 * and scripts/bench/libfabric.sh:
 *
 *   test_mpi [--rounds N] [--max-bytes B] [--pingpong-iters N] [--quiet]
 *
 * Ping-pong between ranks 0 and 1 (1 B ... 4 MiB, every byte checked),
 * MPI_Allreduce (MPI_SUM of doubles) over 1 KiB ... max-bytes (16 MiB)
 * with every element checked, N rounds of it (so a fault can be injected
 * mid-run), and MPI_Barrier. Rank 0 prints one line per size with the
 * average step time and a last line "mpi: N errors"; exits non-zero on any
 * error. */
#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char pat(size_t i, int seed)
{
	return (unsigned char)(i * 131u + (unsigned)seed * 17u + (i >> 11));
}

int main(int argc, char **argv)
{
	int rank, size, rounds = 1, pp_iters = 20, quiet = 0;
	size_t max_bytes = 16u << 20;
	long errors = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (strcmp(argv[i], "--max-bytes") == 0 && i + 1 < argc)
			max_bytes = (size_t)strtoull(argv[++i], NULL, 0);
		else if (strcmp(argv[i], "--pingpong-iters") == 0 && i + 1 < argc)
			pp_iters = atoi(argv[++i]);
		else if (strcmp(argv[i], "--quiet") == 0)
			quiet = 1;
	}
	if (size < 2) {
		if (rank == 0)
			fprintf(stderr, "test_mpi needs at least 2 ranks\n");
		MPI_Finalize();
		return 2;
	}

	/* ping-pong 0 <-> 1 */
	unsigned char *pb = malloc(4u << 20);

	for (size_t n = 1; pp_iters > 0 && n <= (4u << 20); n *= 4) {
		double t0 = MPI_Wtime();

		for (int it = 0; it < pp_iters && rank < 2; it++) {
			if (rank == 0) {
				for (size_t i = 0; i < n; i++)
					pb[i] = pat(i, it);
				MPI_Send(pb, (int)n, MPI_BYTE, 1, it, MPI_COMM_WORLD);
				MPI_Recv(pb, (int)n, MPI_BYTE, 1, it, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				for (size_t i = 0; i < n; i++)
					if (pb[i] != (unsigned char)~pat(i, it)) {
						errors++;
						break;
					}
			} else {
				MPI_Recv(pb, (int)n, MPI_BYTE, 0, it, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				for (size_t i = 0; i < n; i++) {
					if (pb[i] != pat(i, it)) {
						errors++;
						break;
					}
					pb[i] = (unsigned char)~pb[i];
				}
				MPI_Send(pb, (int)n, MPI_BYTE, 0, it, MPI_COMM_WORLD);
			}
		}
		double dt = MPI_Wtime() - t0;

		if (rank == 0 && !quiet)
			printf("pingpong %zu B: %.1f us round trip\n", n, dt / pp_iters * 1e6);
	}
	free(pb);

	/* allreduce, checked element by element */
	size_t maxn = max_bytes / sizeof(double);
	double *in = malloc(maxn * sizeof(double)), *out = malloc(maxn * sizeof(double));

	for (int r = 0; r < rounds; r++) {
		for (size_t bytes = 1024; bytes <= max_bytes; bytes *= 4) {
			size_t n = bytes / sizeof(double);
			int steps = bytes <= (64u << 10) ? 20 : 4;
			double t0 = MPI_Wtime();

			for (int s = 0; s < steps; s++) {
				for (size_t i = 0; i < n; i++)
					in[i] = (double)((i % 1000) * (size_t)(rank + 1) + (size_t)s);
				MPI_Allreduce(in, out, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
				/* sum over ranks k of (i%1000)*(k+1) + s */
				double ranks_sum = (double)size * (size + 1) / 2.0;

				for (size_t i = 0; i < n; i++)
					if (out[i] != (double)(i % 1000) * ranks_sum + (double)s * size) {
						errors++;
						break;
					}
			}
			double dt = (MPI_Wtime() - t0) / steps;

			if (rank == 0 && !quiet)
				printf("allreduce round %d %zu B: %.1f us per step\n", r, bytes, dt * 1e6);
		}
	}
	free(in);
	free(out);

	double t0 = MPI_Wtime();

	for (int i = 0; i < 100; i++)
		MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0 && !quiet)
		printf("barrier: %.1f us\n", (MPI_Wtime() - t0) / 100 * 1e6);

	long total = 0;

	MPI_Allreduce(&errors, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi: %ld errors\n", total);
	MPI_Finalize();
	return total ? 1 : 0;
}
