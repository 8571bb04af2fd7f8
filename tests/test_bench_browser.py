"""The benchmarks' own machinery, where it could measure something else than it says."""

from __future__ import annotations

import os

import pytest

from tests.browser import chromium_threads, main_thread_alone, read_cmdline, throttled_page, wait_as_reader


def cores_of(tid: int) -> frozenset[int] | None:
    try:
        return frozenset(os.sched_getaffinity(tid))
    except OSError:  # the thread ended meanwhile (another test's page, closing)
        return None


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 cores")
def test_main_thread_alone_gives_a_throttled_page_its_core_and_the_rest_the_others(browser):
    """`--main-alone` (tests.bench_click, tests.bench_load): the page's main thread and the throttler's
    thread on the first core, every other thread of the browser (the worker's, the compositor's, the
    raster's, the other processes') on the others, and the browser as it was afterwards."""
    cores = sorted(os.sched_getaffinity(0))
    context = browser.new_context()
    page = throttled_page(context, 4)
    page.set_content("<p>a page</p>")
    page.evaluate(
        "window.w = new Worker(URL.createObjectURL(new Blob(['postMessage(1); setInterval(() => {}, 5)'])));"
        " w.onmessage = () => { window.up = true; }; 1"
    )
    wait_as_reader(page, "window.up === true")  # the worker runs

    def placed() -> dict[str, set]:
        """Each thread's cores, by where it should run: "alone" or "others"."""
        out: dict[str, set] = {"alone": set(), "others": set()}
        for pid, tid, name in chromium_threads():
            main = tid == pid and "--type=renderer" in read_cmdline(pid)
            out["alone" if main or name == "CPUThrottlingTh" else "others"].add(cores_of(tid))
        return {where: found - {None} for where, found in out.items()}

    names = {name for _, _, name in chromium_threads()}
    assert {"CPUThrottlingTh", "DedicatedWorker", "Compositor"} <= names  # throttled, its worker there
    with main_thread_alone(every_s=0.005) as looked:
        want = {"alone": {frozenset(cores[:1])}, "others": {frozenset(cores[1:])}}
        for _ in range(20):  # after a look of the keeper's (a thread born during one is placed by the next)
            looked.clear()
            assert looked.wait(5), "the keeper looks every 5 ms"
            if placed() == want:
                break
        assert placed() == want
    assert placed() == {"alone": {frozenset(cores)}, "others": {frozenset(cores)}}  # as it was
    context.close()
