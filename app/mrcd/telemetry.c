/* telemetry.c - /mrcd/... DPDK telemetry commands (dpdk-telemetry.py).
 *
 * Each command writes the request line the control socket would get, parses
 * and runs it through mrcd_ctl_execute and flattens the JSON result into one telemetry
 * dict: nested keys are joined with "_" ("plane1_rx_pkts": the 22.11 telemetry library refuses keys with dots). A telemetry
 * dict holds at most RTE_TEL_MAX_DICT_ENTRIES values; a longer result ends
 * with "truncated": 1 (use mrcctl --json for everything).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_telemetry.h>

#include "ctl.h"

static struct mrcd_dp *tel_dp;

struct flat {
	struct rte_tel_data *d;
	unsigned n;
	bool truncated;
};

static void flat_add(struct flat *f, const char *key, json_t *v)
{
	if (f->n >= RTE_TEL_MAX_DICT_ENTRIES - 1) {
		f->truncated = true;
		return;
	}
	switch (json_typeof(v)) {
	case JSON_INTEGER:
		rte_tel_data_add_dict_u64(f->d, key, (uint64_t)json_integer_value(v));
		break;
	case JSON_REAL: {
		char b[32];

		snprintf(b, sizeof(b), "%.6g", json_real_value(v));
		rte_tel_data_add_dict_string(f->d, key, b);
		break;
	}
	case JSON_STRING:
		rte_tel_data_add_dict_string(f->d, key, json_string_value(v));
		break;
	case JSON_TRUE:
	case JSON_FALSE:
		rte_tel_data_add_dict_u64(f->d, key, json_is_true(v));
		break;
	default:
		return;
	}
	f->n++;
}

static void flatten(struct flat *f, const char *prefix, json_t *v)
{
	char key[RTE_TEL_MAX_STRING_LEN];

	if (json_is_object(v)) {
		const char *k;
		json_t *c;

		json_object_foreach(v, k, c) {
			snprintf(key, sizeof(key), "%s%s%s", prefix, prefix[0] ? "_" : "", k);
			flatten(f, key, c);
		}
	} else if (json_is_array(v)) {
		size_t i;
		json_t *c;

		json_array_foreach(v, i, c) {
			json_t *name = json_is_object(c) ? json_object_get(c, "name") : NULL;

			if (name && json_is_string(name))
				snprintf(key, sizeof(key), "%s%s%s", prefix, prefix[0] ? "_" : "", json_string_value(name));
			else
				snprintf(key, sizeof(key), "%s%s%zu", prefix, prefix[0] ? "_" : "", i);
			flatten(f, key, c);
		}
	} else {
		flat_add(f, prefix, v);
	}
}

/* The request is written as a control line and parsed like any other, so
 * it carries everything the command's route needs. */
static int tel_run(enum mrcd_ctl_cmd cmd, const char *params, struct rte_tel_data *d)
{
	struct mrcd_ctl_req req;
	char line[128], reason[MRCD_CTL_REASON_MAX];
	struct flat f = { d, 0, false };
	json_t *res;
	int err;

	if (cmd == MRCD_CTL_EVS) {
		char *end;
		unsigned long q = params ? strtoul(params, &end, 0) : 0;

		if (!params || end == params || q == 0 || q > 0xffffff)
			return -EINVAL;
		snprintf(line, sizeof(line), "{\"v\":%d,\"cmd\":\"%s\",\"args\":{\"qpn\":%lu}}",
			 MRCD_CTL_PROTO_VERSION, mrcd_ctl_cmd_name(cmd), q);
	} else {
		snprintf(line, sizeof(line), "{\"v\":%d,\"cmd\":\"%s\"}", MRCD_CTL_PROTO_VERSION,
			 mrcd_ctl_cmd_name(cmd));
	}
	err = mrcd_ctl_parse(line, strlen(line), &req, reason, sizeof(reason));
	res = err ? NULL : mrcd_ctl_execute(tel_dp, &req, NULL, &err, reason, sizeof(reason));
	rte_tel_data_start_dict(d);
	if (!res) {
		rte_tel_data_add_dict_string(d, "error", reason);
		return 0;
	}
	flatten(&f, "", res);
	if (f.truncated)
		rte_tel_data_add_dict_u64(d, "truncated", 1);
	json_decref(res);
	return 0;
}

#define TEL_CMD(fn, cmd)                                                        \
	static int fn(const char *c, const char *params, struct rte_tel_data *d) \
	{                                                                       \
		(void)c;                                                        \
		return tel_run(cmd, params, d);                                 \
	}
TEL_CMD(tel_status, MRCD_CTL_STATUS)
TEL_CMD(tel_ports, MRCD_CTL_PORTS)
TEL_CMD(tel_qps, MRCD_CTL_QPS)
TEL_CMD(tel_evs, MRCD_CTL_EVS)
TEL_CMD(tel_counters, MRCD_CTL_COUNTERS)

int mrcd_telemetry_init(struct mrcd_dp *dp)
{
	int rc = 0;

	tel_dp = dp;
	rc |= rte_telemetry_register_cmd("/mrcd/status", tel_status, "mrcd summary. No parameters");
	rc |= rte_telemetry_register_cmd("/mrcd/ports", tel_ports, "mrcd ports (planes). No parameters");
	rc |= rte_telemetry_register_cmd("/mrcd/qps", tel_qps, "mrcd QPs. No parameters");
	rc |= rte_telemetry_register_cmd("/mrcd/evs", tel_evs, "EVs of one QP. Parameters: qpn");
	rc |= rte_telemetry_register_cmd("/mrcd/counters", tel_counters, "mrcd counters. No parameters");
	return rc ? -EINVAL : 0;
}
