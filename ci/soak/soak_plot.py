"""The soak's plot: workers' peak RSS and throughput against soak time, one
colour per target (targets run one after another, so each holds its own
stretch of the time axis)."""

import svg_plot


def render(rows, jobs_by_target, target_offsets, title):
    """rows: the CSV rows; jobs_by_target: target -> [rss_trend.JobMemory];
    target_offsets: target -> soak seconds at which its run began."""
    names = list(dict.fromkeys(r["target"] for r in rows))
    colours = {name: svg_plot.COLOURS[i % len(svg_plot.COLOURS)] for i, name in enumerate(names)}
    rss, jobs, rate = [], [], []
    for name in names:
        mine = [r for r in rows if r["target"] == name]
        rss.append(svg_plot.Series(name, colours[name], [
            (r["soak_seconds"] / 60, r["worker_peak_rss_mb_max"]) for r in mine if r["workers"] > 0]))
        offset = target_offsets.get(name, 0.0)
        jobs.append(svg_plot.Series(name + " jobs", colours[name], [
            ((offset + j.merged_at) / 60, j.peak_rss_mb) for j in jobs_by_target.get(name, [])],
            dots=True, legend=False))
        rate.append(svg_plot.Series(name, colours[name], [
            (r["soak_seconds"] / 60, r["execs_per_second"]) for r in mine]))
    return svg_plot.render(title, "soak time (minutes)", [
        svg_plot.Panel("workers' peak RSS, MB (line: highest live worker per sample; dots: each job's peak)",
                       rss + jobs),
        svg_plot.Panel("runs per second, log scale (the target's runs so far over its time so far)", rate,
                       log_y=True),
    ])
