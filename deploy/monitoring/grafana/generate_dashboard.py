#!/usr/bin/python3
"""Writes deploy/monitoring/grafana/infera-dashboard.json (the Grafana dashboard).

The JSON is generated so that every panel follows the same conventions (datasource
variable, namespace/model filters, units, legends) and so reviewers read the queries
here, in one place. Edit this file, then:

    /usr/bin/python3 deploy/monitoring/grafana/generate_dashboard.py

tests/deploy checks that the committed JSON is what this script writes, that every
expression parses (promtool) and that every metric it names is in docs/metrics.md or
the recording rules.
"""

import json
import os
import sys

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "infera-dashboard.json")

DS = {"type": "prometheus", "uid": "${datasource}"}
# Filters every tensor-model query shares.
NS = 'namespace=~"$namespace"'
NSM = 'namespace=~"$namespace", model=~"$model"'
RI = "$__rate_interval"


def quantile(q, metric, by="model", extra=""):
    sel = f"{NSM}{extra}"
    return f"histogram_quantile({q}, sum by (le, {by}) (rate({metric}_bucket{{{sel}}}[{RI}])))"


class Layout:
    """Places panels left to right on Grafana's 24-column grid."""

    def __init__(self):
        self.panels = []
        self.next_id = 1
        self.x = 0
        self.y = 0
        self.row_h = 0
        self.current_row = None

    def _id(self):
        self.next_id += 1
        return self.next_id - 1

    def row(self, title, collapsed=False):
        self._newline()
        row = {"id": self._id(), "type": "row", "title": title, "collapsed": collapsed,
               "gridPos": {"h": 1, "w": 24, "x": 0, "y": self.y}, "panels": []}
        self.panels.append(row)
        self.current_row = row if collapsed else None
        self.y += 1

    def _newline(self):
        if self.x:
            self.y += self.row_h
        self.x = 0
        self.row_h = 0

    def add(self, panel, w, h):
        if self.x + w > 24:
            self._newline()
        panel["id"] = self._id()
        panel["gridPos"] = {"h": h, "w": w, "x": self.x, "y": self.y}
        self.x += w
        self.row_h = max(self.row_h, h)
        (self.current_row["panels"] if self.current_row else self.panels).append(panel)


def targets(queries):
    out = []
    for i, (expr, legend) in enumerate(queries):
        out.append({"refId": chr(ord("A") + i), "datasource": DS, "expr": expr,
                    "legendFormat": legend, "range": True})
    return out


def timeseries(title, queries, unit, description, stack=False, thresholds=None, min0=True):
    defaults = {"unit": unit, "custom": {"drawStyle": "line", "lineWidth": 1,
                                         "fillOpacity": 10 if not stack else 40,
                                         "showPoints": "never",
                                         "stacking": {"mode": "normal" if stack else "none",
                                                      "group": "A"}}}
    if min0:
        defaults["min"] = 0
    if thresholds:
        defaults["thresholds"] = {"mode": "absolute", "steps": [
            {"color": "green", "value": None}] + [
            {"color": color, "value": value} for value, color in thresholds]}
        defaults["custom"]["thresholdsStyle"] = {"mode": "line"}
    return {"type": "timeseries", "title": title, "description": description,
            "datasource": DS, "targets": targets(queries),
            "fieldConfig": {"defaults": defaults, "overrides": []},
            "options": {"legend": {"displayMode": "table", "placement": "bottom",
                                   "calcs": ["mean", "max", "lastNotNull"]},
                        "tooltip": {"mode": "multi", "sort": "desc"}}}


def stat(title, expr, unit, description, thresholds=None, decimals=None):
    defaults = {"unit": unit}
    if decimals is not None:
        defaults["decimals"] = decimals
    steps = [{"color": "green", "value": None}]
    for value, color in thresholds or []:
        steps.append({"color": color, "value": value})
    defaults["thresholds"] = {"mode": "absolute", "steps": steps}
    return {"type": "stat", "title": title, "description": description, "datasource": DS,
            "targets": targets([(expr, "")]),
            "fieldConfig": {"defaults": defaults, "overrides": []},
            "options": {"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                        "colorMode": "background", "graphMode": "area", "textMode": "auto"}}


def heatmap(title, expr, description):
    return {"type": "heatmap", "title": title, "description": description, "datasource": DS,
            "targets": [{"refId": "A", "datasource": DS, "expr": expr, "format": "heatmap",
                         "legendFormat": "{{le}}", "range": True}],
            "fieldConfig": {"defaults": {}, "overrides": []},
            "options": {"calculate": False, "yAxis": {"unit": "short"},
                        "cellGap": 1, "color": {"mode": "scheme", "scheme": "Oranges"},
                        "tooltip": {"show": True, "yHistogram": True}}}


def variable_query(name, label, query, multi, include_all):
    return {"name": name, "label": label, "type": "query", "datasource": DS,
            "query": {"query": query, "refId": f"{name}-values"},
            "definition": query, "refresh": 2, "sort": 1, "multi": multi,
            "includeAll": include_all, "allValue": ".*" if include_all else None,
            "current": {}, "hide": 0, "options": []}


def build():
    L = Layout()
    errors = 'outcome=~"backend_error|timeout|rejected"'

    L.row("Overview")
    L.add(stat("Ready replicas", f"sum(infera_server_ready{{{NS}}})", "none",
               "Replicas answering 200 on /v2/health/ready."), 4, 4)
    L.add(stat("Replicas needed (70 %)", f"sum(namespace:infera_replicas_needed:ceil{{{NS}}})",
               "none", "ceil(sum of per-pod load ratios / 0.7): what the autoscalers aim for."),
          4, 4)
    L.add(stat("Throughput", f"sum(rate(infera_requests_total{{{NSM}, outcome=\"success\"}}[{RI}]))",
               "reqps", "Successful requests per second, selected models."), 4, 4)
    L.add(stat("Error ratio",
               f"sum(rate(infera_requests_total{{{NSM}, {errors}}}[{RI}])) / "
               f"sum(rate(infera_requests_total{{{NSM}}}[{RI}]))",
               "percentunit", "Backend errors + queue timeouts + rejections over all requests "
               "(alert at 0.5 %).", thresholds=[(0.001, "yellow"), (0.005, "red")], decimals=2),
          4, 4)
    L.add(stat("P99 latency", f"max({quantile(0.99, 'infera_request_duration_seconds')})", "s",
               "Worst model's end-to-end P99 (SLO 100 ms).",
               thresholds=[(0.08, "yellow"), (0.1, "red")]), 4, 4)
    L.add(stat("Queued requests", f"sum(infera_queue_depth{{{NSM}}})", "none",
               "Requests waiting for an instance, all replicas.",
               thresholds=[(10, "yellow"), (100, "red")]), 4, 4)

    L.row("Traffic and latency (per model, all replicas)")
    L.add(timeseries("Throughput by model", [
        (f"sum by (model) (rate(infera_requests_total{{{NSM}, outcome=\"success\"}}[{RI}]))",
         "{{model}}")], "reqps", "Successful requests per second."), 12, 8)
    L.add(timeseries("Inferences and executions by model", [
        (f"sum by (model) (rate(infera_inferences_total{{{NSM}}}[{RI}]))", "{{model}} rows"),
        (f"sum by (model) (rate(infera_executions_total{{{NSM}}}[{RI}]))", "{{model}} executions")],
        "ops", "Rows inferred vs backend executions per second: the gap is what batching saves."),
        12, 8)
    L.add(timeseries("End-to-end latency P50 / P95 / P99", [
        (quantile(0.5, "infera_request_duration_seconds"), "{{model}} P50"),
        (quantile(0.95, "infera_request_duration_seconds"), "{{model}} P95"),
        (quantile(0.99, "infera_request_duration_seconds"), "{{model}} P99")],
        "s", "From the infera_request_duration_seconds histogram, aggregated across replicas "
        "(request read -> response ready, successful requests).",
        thresholds=[(0.1, "red")]), 12, 8)
    L.add(timeseries("Where the time goes: queue vs compute (P95)", [
        (quantile(0.95, "infera_queue_duration_seconds"), "{{model}} queue"),
        (quantile(0.95, "infera_compute_duration_seconds"), "{{model}} compute")],
        "s", "Queue P95 growing while compute stays flat means too few instances/replicas; "
        "compute growing means bigger batches or CPU contention."), 12, 8)

    L.row("Errors")
    L.add(timeseries("Failed requests by outcome", [
        (f"sum by (model, outcome) (rate(infera_requests_total{{{NSM}, outcome!=\"success\"}}[{RI}]))",
         "{{model}} {{outcome}}")], "reqps",
        "bad_request (client), rejected (queue full, 429), timeout (expired in queue), "
        "cancelled (client gone), backend_error.", stack=True), 8, 8)
    L.add(timeseries("Error ratio by model", [
        (f"sum by (model) (rate(infera_requests_total{{{NSM}, {errors}}}[{RI}])) / "
         f"sum by (model) (rate(infera_requests_total{{{NSM}}}[{RI}]))", "{{model}}")],
        "percentunit", "Server-side failures over all requests; the alert fires above 0.5 %.",
        thresholds=[(0.005, "red")]), 8, 8)
    L.add(timeseries("HTTP responses by status code", [
        (f"sum by (code) (rate(infera_http_requests_total{{{NS}}}[{RI}]))", "{{code}}")],
        "reqps", "Every route, including health checks and metadata.", stack=True), 8, 8)

    L.row("Queue and batching")
    L.add(timeseries("Queue depth by model", [
        (f"sum by (model) (infera_queue_depth{{{NSM}}})", "{{model}} queued"),
        (f"sum by (model) (infera_inflight_requests{{{NSM}}})", "{{model}} in flight")],
        "none", "Queued: waiting for an instance. In flight: queued or executing."), 8, 8)
    L.add(heatmap("Batch size distribution",
                  f"sum by (le) (increase(infera_batch_size_bucket{{{NSM}}}[{RI}]))",
                  "Rows per execution (buckets 1, 2, 4 ... 256), selected models."), 8, 8)
    L.add(timeseries("Mean batch size by model", [
        (f"sum by (model) (rate(infera_batch_size_sum{{{NSM}}}[{RI}])) / "
         f"sum by (model) (rate(infera_batch_size_count{{{NSM}}}[{RI}]))", "{{model}}")],
        "none", "Rows per backend execution."), 8, 8)

    L.row("Capacity and autoscaling")
    L.add(timeseries("Load ratio by pod (busiest model)", [
        (f"max by (pod) (infera_load_ratio{{{NSM}}})", "{{pod}}")],
        "percentunit", "Demand / measured capacity (1.0 = saturated). The autoscalers "
        "target 0.7 on average.", thresholds=[(0.7, "yellow"), (1.0, "red")]), 8, 8)
    L.add(timeseries("Replicas: ready vs needed", [
        (f"sum(namespace:infera_ready_replicas:sum{{{NS}}})", "ready"),
        (f"sum(namespace:infera_replicas_needed:ceil{{{NS}}})", "needed at 70 %")],
        "none", "Needed = ceil(sum of load ratios / 0.7), the HPA/KEDA target."), 8, 8)
    L.add(timeseries("Instance busy ratio by model", [
        (f"avg by (model) (infera_instance_busy_ratio{{{NSM}}})", "{{model}}")],
        "percentunit", "Fraction of time the model's instances spent executing."), 8, 8)

    L.row("Process")
    L.add(timeseries("Resident memory by pod", [
        (f"process_resident_memory_bytes{{{NS}}} and on (namespace, pod) infera_server_ready",
         "{{pod}}")], "bytes", "RSS; compare with the container memory limit."), 8, 8)
    L.add(timeseries("CPU by pod", [
        (f"rate(process_cpu_seconds_total{{{NS}}}[{RI}]) and on (namespace, pod) infera_server_ready",
         "{{pod}}")], "none", "Cores used; compare with the CPU limit."), 8, 8)
    L.add(timeseries("Models ready by pod", [
        (f"sum by (pod) (infera_model_ready{{{NS}}})", "{{pod}} ready"),
        (f"sum by (pod) (infera_models_loaded{{{NS}}})", "{{pod}} loaded")],
        "none", "Model versions READY per replica."), 8, 8)

    L.row("LLM serving", collapsed=True)
    L.add(timeseries("Time to first token P50 / P95 / P99", [
        (quantile(0.5, "infera_llm_time_to_first_token_seconds"), "{{model}} P50"),
        (quantile(0.95, "infera_llm_time_to_first_token_seconds"), "{{model}} P95"),
        (quantile(0.99, "infera_llm_time_to_first_token_seconds"), "{{model}} P99")],
        "s", "TTFT: request arrival to first generated token."), 12, 8)
    L.add(timeseries("Inter-token latency P50 / P95 / P99", [
        (quantile(0.5, "infera_llm_inter_token_latency_seconds"), "{{model}} P50"),
        (quantile(0.95, "infera_llm_inter_token_latency_seconds"), "{{model}} P95"),
        (quantile(0.99, "infera_llm_inter_token_latency_seconds"), "{{model}} P99")],
        "s", "ITL (TPOT): time between consecutive tokens of a sequence."), 12, 8)
    L.add(timeseries("Tokens per second", [
        (f"sum by (model) (rate(infera_llm_generation_tokens_total{{{NSM}}}[{RI}]))",
         "{{model}} generated"),
        (f"sum by (model) (rate(infera_llm_prompt_tokens_total{{{NSM}}}[{RI}]))",
         "{{model}} prompt")], "none", "Generated and prompt (prefill) tokens per second."),
        8, 8)
    L.add(timeseries("KV cache usage by pod", [
        (f"max by (pod, model) (infera_llm_kv_cache_usage_ratio{{{NSM}}})", "{{pod}} {{model}}")],
        "percentunit", "Fraction of KV cache blocks in use; near 1.0 sequences get preempted.",
        thresholds=[(0.9, "yellow"), (0.98, "red")]), 8, 8)
    L.add(timeseries("Sequences running / waiting", [
        (f"sum by (model) (infera_llm_running_sequences{{{NSM}}})", "{{model}} running"),
        (f"sum by (model) (infera_llm_waiting_sequences{{{NSM}}})", "{{model}} waiting")],
        "none", "Continuous batching: sequences in the running batch and waiting for it."), 8, 8)
    L.add(timeseries("End-to-end and queue time P95", [
        (quantile(0.95, "infera_llm_e2e_request_latency_seconds"), "{{model}} e2e"),
        (quantile(0.95, "infera_llm_queue_time_seconds"), "{{model}} queue")],
        "s", "Whole request, and time waiting before the first schedule."), 8, 8)
    L.add(timeseries("Prefix cache hit ratio", [
        (f"sum by (model) (rate(infera_llm_prefix_cache_hits_total{{{NSM}}}[{RI}])) / "
         f"sum by (model) (rate(infera_llm_prefix_cache_queries_total{{{NSM}}}[{RI}]))",
         "{{model}}")], "percentunit", "Prompt tokens served from the prefix cache."), 8, 8)
    L.add(timeseries("Preemptions per second", [
        (f"sum by (model) (rate(infera_llm_preemptions_total{{{NSM}}}[{RI}]))", "{{model}}")],
        "none", "Sequences evicted from the KV cache to make room (recomputed later)."), 8, 8)

    return {
        "__inputs": [],
        "title": "infera",
        "uid": "infera-overview",
        "description": "infera inference server: traffic, latency, errors, queueing, batching, "
                       "capacity/autoscaling and LLM serving, per model across replicas.",
        "tags": ["infera", "inference"],
        "editable": True,
        "graphTooltip": 1,
        "timezone": "browser",
        "refresh": "30s",
        "time": {"from": "now-1h", "to": "now"},
        "schemaVersion": 39,
        "version": 1,
        "links": [],
        "annotations": {"list": [{
            "builtIn": 1, "datasource": {"type": "grafana", "uid": "-- Grafana --"},
            "enable": True, "hide": True, "iconColor": "rgba(0, 211, 255, 1)",
            "name": "Annotations & Alerts", "type": "dashboard"}]},
        "templating": {"list": [
            {"name": "datasource", "label": "Prometheus", "type": "datasource",
             "query": "prometheus", "current": {}, "hide": 0, "refresh": 1, "options": []},
            variable_query("namespace", "Namespace", "label_values(infera_server_ready, namespace)",
                           multi=True, include_all=True),
            variable_query("model", "Model",
                           'label_values(infera_requests_total{namespace=~"$namespace"}, model)',
                           multi=True, include_all=True),
        ]},
        "panels": L.panels,
    }


def main():
    text = json.dumps(build(), indent=2, sort_keys=False) + "\n"
    out = sys.argv[1] if len(sys.argv) > 1 else OUT
    with open(out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
