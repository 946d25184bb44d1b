/* mrcp_test.c - runner for mrcp_test.h: forks each registered test, reports
 * failures with file:line, and ends with "N passed, N failed". */
#include "mrcp_test.h"

#include <stdarg.h>
#include <sys/wait.h>
#include <unistd.h>

static struct mrcp_test *tests_head;
static struct mrcp_test **tests_tail = &tests_head;

void mrcp_test_register(struct mrcp_test *t)
{
	/* constructors run in file order; keep that order (practice 3). */
	*tests_tail = t;
	tests_tail = &t->next;
}

void mrcp_test_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "  %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	exit(1);
}

void mrcp_test_figure(const char *name, double value, const char *unit)
{
	printf("  figure: %s %.6g %s\n", name, value, unit);
	fflush(stdout);
}

static bool selected(const struct mrcp_test *t, int argc, char **argv)
{
	char full[256];

	if (argc <= 1)
		return true;
	snprintf(full, sizeof(full), "%s.%s", t->suite, t->name);
	for (int i = 1; i < argc; i++)
		if (strstr(full, argv[i]) != NULL)
			return true;
	return false;
}

static int run_one(const struct mrcp_test *t, bool nofork)
{
	pid_t pid;
	int status;

	if (nofork) {
		t->fn();
		return 0;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		t->fn();
		fflush(stdout);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) < 0)
		return 1;
	if (WIFSIGNALED(status)) {
		fprintf(stderr, "  killed by signal %d\n", WTERMSIG(status));
		return 1;
	}
	return WEXITSTATUS(status) != 0;
}

int main(int argc, char **argv)
{
	const char *nf = getenv("MRCP_TEST_NOFORK");
	bool nofork = nf != NULL && nf[0] == '1';
	unsigned passed = 0, failed = 0;

	for (struct mrcp_test *t = tests_head; t != NULL; t = t->next) {
		if (!selected(t, argc, argv))
			continue;
		printf("RUN  %s.%s\n", t->suite, t->name);
		if (run_one(t, nofork) == 0) {
			passed++;
		} else {
			failed++;
			printf("FAIL %s.%s\n", t->suite, t->name);
		}
	}
	printf("%u passed, %u failed\n", passed, failed);
	return failed != 0 || passed == 0;
}
