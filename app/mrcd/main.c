/* main.c - mrcd: the MRC transport daemon.
 *
 *   mrcd [-c FILE] [--check] [--seed N] [-- EAL-ARGS...]
 *
 * Loads the configuration (or the embedded default), initialises EAL with
 * the config's eal.args followed by the command line's, builds the datapath
 * (lib/dp), serves the control socket on the main thread and the engine on
 * the worker lcore, and on SIGINT/SIGTERM stops the worker, tells control
 * clients, frees everything and removes its socket and DPDK runtime files.
 *
 * Exit codes: 0 clean shutdown (or --check passed); 1 a run-time failure
 * (EAL, devices, socket); 2 a usage or configuration error, with one line
 * "<file>:<line>: <key>: <reason>" on stderr.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_pdump.h>
#ifdef MRCD_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "config_dp.h"
#include "ctl.h"
#include "dp.h"
#include "dp_log.h"
#include "mrcd_config.h"
#include "port_files.h"
#ifdef MRCD_HAVE_MICROHTTPD
#include "prom.h"
#endif

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: mrcd [-c FILE] [--check] [--seed N] [-- EAL-ARGS...]\n"
		"  -c, --config FILE  YAML configuration (docs/configuration.md); default: the\n"
		"                     embedded one-net_null-port configuration\n"
		"      --check        validate the configuration and exit (0 = valid, 2 = not)\n"
		"      --seed N       PRNG seed of the engine and fault stage (default: time)\n"
		"  -V, --version      print the version\n"
		"  -h, --help         this text\n"
		"EAL arguments after -- are appended to the config's eal.args.\n");
}

static bool has_core_arg(int argc, char **argv)
{
	for (int i = 0; i < argc; i++)
		if (strcmp(argv[i], "-l") == 0 || strcmp(argv[i], "-c") == 0 ||
		    strncmp(argv[i], "--lcores", 8) == 0 || strncmp(argv[i], "-l", 2) == 0)
			return true;
	return false;
}

/* Tell systemd (Type=notify, $NOTIFY_SOCKET) about a state change; nothing
 * without libsystemd or outside a unit. */
__attribute__((format(printf, 1, 2)))
static void notify_systemd(const char *fmt, ...)
{
#ifdef MRCD_HAVE_SYSTEMD
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sd_notify(0, msg);
#else
	(void)fmt;
#endif
}

static bool has_arg(int argc, char **argv, const char *a)
{
	for (int i = 0; i < argc; i++)
		if (strcmp(argv[i], a) == 0)
			return true;
	return false;
}

/* The configuration against this machine (mrcd_config_check_host), with
 * the EAL arguments mrcd will pass: eal.args, then the command line's. */
static int check_host(const char *name, const struct mrcd_config *cfg, int argc, char **argv,
		      char *err, size_t errlen)
{
	struct mrcd_host h;
	char **eal = calloc(cfg->eal.n_args + (unsigned)argc + 1, sizeof(char *));
	unsigned n = 0;
	int rc;

	if (!eal) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (unsigned i = 0; i < cfg->eal.n_args; i++)
		eal[n++] = cfg->eal.args[i];
	for (int i = 0; i < argc; i++)
		eal[n++] = argv[i];
	rc = mrcd_host_read(&h);
	if (rc == 0) {
		h.max_lcores = RTE_MAX_LCORE;
		rc = mrcd_config_check_host(name, cfg, eal, n, &h, err, errlen);
	} else {
		snprintf(err, errlen, "sched_getaffinity: %s", strerror(-rc));
	}
	free(eal);
	return rc;
}

/* Remove the files DPDK left in its runtime directory (config, fbarrays,
 * the multi-process socket) and the directory, once EAL has been cleaned up.
 * Only for a primary process with its own --file-prefix directory. */
static void remove_runtime_dir(const char *dir)
{
	DIR *d;
	struct dirent *e;
	char p[4096];

	if (!dir[0] || strstr(dir, "/dpdk/") == NULL)
		return;
	d = opendir(dir);
	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		unlink(p);
	}
	closedir(d);
	rmdir(dir);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check", no_argument, NULL, 'k' },
		{ "seed", required_argument, NULL, 's' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct mrcd_config cfg;
	struct mrcd_dp_config dpc;
	const char *cfg_path = NULL;
	bool check = false, seeded = false;
	uint64_t seed = 0;
	char err[512];
	int opt, rc, status = 0;
	struct mrcd_dp *dp = NULL;
	struct mrcd_ctl_server *ctl = NULL;
#ifdef MRCD_HAVE_MICROHTTPD
	struct mrcd_prom *prom = NULL;
#endif
	char runtime_dir[4096] = "";
	bool pdump = false;

	while ((opt = getopt_long(argc, argv, "+c:Vh", opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			cfg_path = optarg;
			break;
		case 'k':
			check = true;
			break;
		case 's': {
			char *end;

			errno = 0;
			seed = strtoull(optarg, &end, 0);
			if (errno || *end || end == optarg) {
				fprintf(stderr, "mrcd: --seed: not a number: %s\n", optarg);
				return 2;
			}
			seeded = true;
			break;
		}
		case 'V':
			printf("mrcd %s\n", MRCD_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc && strcmp(argv[optind - 1], "--") != 0) {
		fprintf(stderr, "mrcd: unexpected argument \"%s\" (EAL arguments go after --)\n", argv[optind]);
		return 2;
	}

	mrcd_config_defaults(&cfg);
	if (cfg_path)
		rc = mrcd_config_load(cfg_path, &cfg, err, sizeof(err));
	else
		rc = mrcd_config_load_string("<embedded default>", mrcd_config_default_yaml, &cfg, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "mrcd: %s\n", err);
		mrcd_config_free(&cfg);
		return 2;
	}
#ifndef MRCD_HAVE_MICROHTTPD
	if (cfg.telemetry.prometheus.enabled) {
		fprintf(stderr, "mrcd: %s:%u: telemetry.prometheus.listen: this mrcd was built without "
			"libmicrohttpd (libmicrohttpd-dev) and cannot serve /metrics: remove the key or "
			"rebuild with it\n", cfg_path ? cfg_path : "<embedded default>",
			cfg.telemetry.prometheus.line);
		mrcd_config_free(&cfg);
		return 2;
	}
#endif
	rc = check_host(cfg_path ? cfg_path : "<embedded default>", &cfg, argc - optind, argv + optind,
			err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "mrcd: %s\n", err);
		mrcd_config_free(&cfg);
		return rc == -EINVAL ? 2 : 1;
	}
	if (check) {
		printf("mrcd: %s: configuration valid (%u ports)\n", cfg_path ? cfg_path : "<embedded default>", cfg.n_ports);
		mrcd_config_free(&cfg);
		return 0;
	}
	if (!seeded)
		seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	/* a memif socket's directory, a stale socket file: before any probe */
	for (unsigned i = 0; i < cfg.n_ports; i++)
		if (mrcd_port_files_prepare(cfg.ports[i].devargs, err, sizeof(err)) < 0) {
			fprintf(stderr, "mrcd: ports[%u] %s: %s\n", i, cfg.ports[i].name, err);
			mrcd_config_free(&cfg);
			return 1;
		}

	/* EAL argv: program name, config eal.args, command-line EAL args, and
	 * a core list (main lcore 0 + the worker) unless one was given. */
	int extra = argc - optind;
	int n = 0;
	char **eargv = calloc((size_t)(cfg.eal.n_args + (unsigned)extra + 4), sizeof(char *));
	char lcores[64], lflag[] = "-l";

	if (!eargv) {
		fprintf(stderr, "mrcd: out of memory\n");
		mrcd_config_free(&cfg);
		return 1;
	}
	eargv[n++] = argv[0];
	for (unsigned i = 0; i < cfg.eal.n_args; i++)
		eargv[n++] = cfg.eal.args[i];
	for (int i = optind; i < argc; i++)
		eargv[n++] = argv[i];
	if (!has_core_arg(n - 1, eargv + 1)) {
		int w = snprintf(lcores, sizeof(lcores), "0");

		for (unsigned k = 0; k < cfg.lcores.n_ids && w > 0 && (size_t)w < sizeof(lcores); k++)
			w += snprintf(lcores + w, sizeof(lcores) - (size_t)w, ",%u", cfg.lcores.ids[k]);
		eargv[n++] = lflag;
		eargv[n++] = lcores;
	}
	char **eargv_copy = calloc((size_t)n + 1, sizeof(char *));

	if (!eargv_copy) {
		free(eargv);
		mrcd_config_free(&cfg);
		return 1;
	}
	memcpy(eargv_copy, eargv, (size_t)n * sizeof(char *)); /* rte_eal_init permutes argv */
	/* dpdk-dumpcap attaches as a secondary process: it needs the hugepage
	 * files of this --file-prefix, which these options do not leave */
	const char *no_shared = has_arg(n, eargv, "--no-huge") ? "--no-huge" :
		has_arg(n, eargv, "--in-memory") ? "--in-memory" :
		has_arg(n, eargv, "--huge-unlink") || has_arg(n, eargv, "--huge-unlink=always") ?
		"--huge-unlink" : NULL;

	rc = rte_eal_init(n, eargv_copy);
	if (rc < 0) {
		fprintf(stderr, "mrcd: EAL initialisation failed: %s\n", rte_strerror(rte_errno));
		free(eargv);
		free(eargv_copy);
		mrcd_config_free(&cfg);
		return 1;
	}
	if (rte_eal_process_type() == RTE_PROC_PRIMARY)
		snprintf(runtime_dir, sizeof(runtime_dir), "%s", rte_eal_get_runtime_dir());
	mrcd_dp_log_init();
	mrcd_dp_time_init();

	signal(SIGPIPE, SIG_IGN);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	rc = mrcd_config_to_dp(&cfg, seed, &dpc, err, sizeof(err));
	if (rc == 0) {
		rc = mrcd_dp_create(&dpc, &dp, err, sizeof(err));
		mrcd_config_dp_free(&dpc);
	}
	if (rc < 0) {
		fprintf(stderr, "mrcd: %s\n", err);
		status = 1;
		goto out;
	}
	rc = mrcd_ctl_open(dp, &cfg, &ctl, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "mrcd: %s\n", err);
		status = 1;
		goto out;
	}
	if (cfg.telemetry.enabled && mrcd_telemetry_init(dp) < 0)
		MRCD_LOG(WARNING, main, "telemetry commands not registered\n");
	if (no_shared != NULL) {
		MRCD_LOG(NOTICE, main, "pdump not available: %s leaves no memory a secondary process "
			 "can map (dpdk-dumpcap needs a hugetlbfs mount and a --file-prefix, "
			 "docs/operations.md \"Memory modes\")\n", no_shared);
	} else {
		pdump = rte_pdump_init() == 0;
		if (!pdump)
			MRCD_LOG(WARNING, main, "pdump not available: %s\n", rte_strerror(rte_errno));
	}
	rc = mrcd_dp_start(dp);
	if (rc < 0) {
		fprintf(stderr, "mrcd: cannot start the worker lcores: %s (see the log)\n", strerror(-rc));
		status = 1;
		goto out;
	}
#ifdef MRCD_HAVE_MICROHTTPD
	/* after the workers run: a scrape is a call on each of them */
	if (cfg.telemetry.prometheus.enabled) {
		rc = mrcd_prom_start(dp, &cfg, &prom, err, sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "mrcd: %s\n", err);
			status = 1;
			goto out;
		}
	}
#endif
	MRCD_LOG(NOTICE, main, "mrcd %s running: %u ports, control socket %s, seed 0x%" PRIx64 "\n",
		 MRCD_VERSION, cfg.n_ports, cfg.control.socket, seed);
	printf("mrcd: ready (pid %d, control %s)\n", (int)getpid(), cfg.control.socket);
	fflush(stdout);
	notify_systemd("READY=1\nSTATUS=serving %s", cfg.control.socket);

	while (!stop_signal)
		mrcd_ctl_serve(ctl, 100);
	MRCD_LOG(NOTICE, main, "signal %d: shutting down\n", (int)stop_signal);
	notify_systemd("STOPPING=1");

out:
#ifdef MRCD_HAVE_MICROHTTPD
	mrcd_prom_stop(prom); /* before the workers go: its scrapes call them */
#endif
	mrcd_ctl_close(ctl);
	if (dp) {
		mrcd_dp_destroy(dp); /* stops the workers, ends the selftests */
	}
	if (pdump)
		rte_pdump_uninit();
	rte_eal_cleanup();
	remove_runtime_dir(runtime_dir);
	free(eargv);
	free(eargv_copy);
	mrcd_config_free(&cfg);
	if (status == 0)
		printf("mrcd: stopped\n");
	/* Leave without running the shared objects' destructors: DPDK 22.11's
	 * rte_eal_cleanup() does not join EAL's interrupt thread, which then
	 * reads interrupt handles the PMDs' destructors (run by exit) free,
	 * and crashed mrcd on its way out (SIGSEGV in rte_intr_fd_get, seen
	 * after a capture and after a peer vanished mid-transfer). Everything
	 * mrcd owns is released above; stdio is flushed here. */
	fflush(NULL);
	_exit(status);
}
