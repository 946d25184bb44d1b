/* fuzz_config.c - libFuzzer target for mrcd_config_load_string(), the YAML
 * configuration loader of the daemon: any text as the file. A refusal must
 * be -EINVAL or -ENOMEM with a "<name>:..." message and leave the
 * defaults behind (owning nothing); an accepted config must hold what the
 * loader promises (1..MRCD_MAX_PORTS ports, 1..MRCD_MAX_LCORES unique lcore
 * ids, a payload MTU of 1024/2048/4096, terminated strings, every port's
 * MTU carrying the payload), convert to engine and frame settings, and get
 * a verdict from the machine check against a two-CPU host. The same text
 * gives the same verdict twice. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "mrcd_config.h"
#include "mrcp_engine.h"
#include "mrcp_frame.h"

#define NAME "fuzz.yaml"

static struct mrcd_config cfg, defaults;

static void check_loaded(const struct mrcd_config *c)
{
	struct mrcp_engine_config e;
	struct mrcp_frame_rx_cfg rx;

	CHECK(c->n_ports >= 1 && c->n_ports <= MRCD_MAX_PORTS);
	for (unsigned i = 0; i < c->n_ports; i++) {
		const struct mrcd_port_config *p = &c->ports[i];

		CHECK(memchr(p->name, '\0', sizeof(p->name)) != NULL && p->name[0] != '\0');
		CHECK(memchr(p->devargs, '\0', sizeof(p->devargs)) != NULL && p->devargs[0] != '\0');
		CHECK(p->ipv4.ip.family != 0 || p->ipv6.ip.family != 0);
		CHECK(p->mtu >= c->transport.mtu + mrcd_config_frame_overhead(c));
		for (unsigned k = 0; k < i; k++)
			CHECK(strcmp(p->name, c->ports[k].name) != 0);
	}
	CHECK(c->lcores.n_ids >= 1 && c->lcores.n_ids <= MRCD_MAX_LCORES);
	for (unsigned i = 0; i < c->lcores.n_ids; i++)
		for (unsigned k = 0; k < i; k++)
			CHECK(c->lcores.ids[i] != c->lcores.ids[k]);
	CHECK(c->transport.mtu == 1024 || c->transport.mtu == 2048 || c->transport.mtu == 4096);
	CHECK(memchr(c->cc.algorithm, '\0', sizeof(c->cc.algorithm)) != NULL);
	CHECK(memchr(c->control.socket, '\0', sizeof(c->control.socket)) != NULL);
	CHECK(c->control.socket[0] == '/' && c->control.mode <= 0777);
	CHECK(c->eal.n_args == 0 || c->eal.args != NULL);
	for (unsigned i = 0; i < c->eal.n_args; i++)
		CHECK(c->eal.args[i] != NULL);
	CHECK(c->n_neighbours == 0 || c->neighbours != NULL);
	for (unsigned i = 0; i < c->n_neighbours; i++)
		CHECK(c->neighbours[i].port >= -1 && c->neighbours[i].port < (int)c->n_ports);
	CHECK(c->srv6.n_templates == 0 || c->srv6.templates != NULL);
	CHECK(c->n_faults == 0 || c->faults != NULL);
	CHECK(mrcd_config_family(c) == 4 || mrcd_config_family(c) == 6);
	/* the machine check (EAL core lists come from the text): a verdict
	 * and, for a refusal, one "<name>:<line>: lcores.ids..." line */
	{
		struct mrcd_host h = { .cpus = { 3 }, .max_lcores = 128 };
		char err[512];
		int rc = mrcd_config_check_host(NAME, c, c->eal.args, c->eal.n_args, &h, err, sizeof(err));

		CHECK(rc == 0 || rc == -EINVAL || rc == -ENOMEM);
		if (rc == -EINVAL)
			CHECK(strncmp(err, NAME ":", strlen(NAME) + 1) == 0 && strstr(err, ": lcores.ids") != NULL &&
			      strchr(err, '\n') == NULL);
	}
	mrcd_config_to_engine(c, &e);
	CHECK(e.n_ports == c->n_ports);
	mrcd_config_to_frame_rx(c, &rx);
	CHECK(rx.udp_port == c->transport.udp_port);
}

/* Load @text, check the result and return the verdict, with the message in @err. */
static int load(const char *text, char *err, size_t errlen)
{
	int rc;

	memset(err, 'x', errlen);
	rc = mrcd_config_load_string(NAME, text, &cfg, err, errlen);
	CHECK(memchr(err, '\0', errlen) != NULL);
	if (rc == 0) {
		CHECK(err[0] == '\0');
		check_loaded(&cfg);
		mrcd_config_free(&cfg);
	} else {
		CHECK(rc == -EINVAL || rc == -ENOMEM);
		/* "<name>:<line>: ...", one line even when the message echoes
		 * a value with a newline in it (corpus/config/newline_in_value.yaml) */
		CHECK(strncmp(err, NAME, strlen(NAME)) == 0);
		CHECK(strchr(err, '\n') == NULL);
		CHECK(memcmp(&cfg, &defaults, sizeof(cfg)) == 0);
	}
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a NUL-terminated private copy: the loader takes a C string */
	char *text = malloc(size + 1);
	char err[512], err2[512];
	int rc;

	CHECK(text != NULL);
	memcpy(text, data, size);
	text[size] = '\0';
	mrcd_config_defaults(&defaults);
	rc = load(text, err, sizeof(err));
	CHECK(load(text, err2, sizeof(err2)) == rc && strcmp(err, err2) == 0);
	free(text);
	return 0;
}
