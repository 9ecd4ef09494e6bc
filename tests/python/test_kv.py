# SPDX-License-Identifier: BSD-3-Clause
"""The KV SDK from Python: store / retrieve / delete / exist, iterators as Python iterators,
kv_result codes as KvError named as kv_types.h names them."""
import re

import pytest

import unvme_env  # noqa: F401 (first: the library and the environment)
import unvme
from unvme_env import REPO
from unvme import kv_results


@pytest.fixture
def dev(request):
    # a device of the test's own: a named device outlives the SDK that opened it (a device
    # process keeps it), so one shared name would carry one test's keys into the next
    with unvme.KvSdk([f"emu://pykv-{request.node.name[:40]}?ns=kv:64M"]) as sdk:
        yield sdk.devices[0]


def test_store_retrieve_delete_exist(dev):
    dev.store(b"apple", b"red")
    dev.store("pear", bytearray(b"green"))
    dev.store(b"bigv", memoryview(bytes(range(256)) * 100))
    assert dev.retrieve(b"apple") == b"red"
    assert dev.retrieve("pear") == b"green"
    assert dev.retrieve(b"bigv") == bytes(range(256)) * 100  # longer than the first buffer
    out = bytearray(8)
    assert dev.retrieve_into(b"pear", out) == 5 and out[:5] == b"green"
    assert dev.exist("apple") and "pear" in dev and "plum" not in dev
    dev.store(b"apple", b"green too")
    assert dev.retrieve(b"apple") == b"green too"
    dev.delete(b"apple")
    assert not dev.exist(b"apple")
    with pytest.raises(unvme.KvError) as e:
        dev.retrieve(b"apple")
    assert e.value.name == "KV_ERR_NOT_EXIST_KEY" and e.value.result == 0x10
    assert str(e.value) == "kv_retrieve: KV_ERR_NOT_EXIST_KEY (0x10)"
    with pytest.raises(unvme.KvError) as e:
        dev.store(b"abc", b"key too short")
    assert e.value.name == "KV_ERR_INVALID_KEY_SIZE"
    with pytest.raises(TypeError, match="key must be"):
        dev.store(12345, b"x")
    assert dev.used_size <= dev.total_size


def test_iterators_are_python_iterators(dev):
    for i in range(300):
        dev.store(f"usr{i:05d}".encode(), b"v")
    for i in range(50):
        dev.store(f"tmp{i:05d}".encode(), b"v")
    assert sorted(dev.iterate(b"usr")) == [f"usr{i:05d}".encode() for i in range(300)]
    assert len(list(dev.iterate(b"tmp0"))) == 50
    assert len(list(dev)) == 350
    assert list(dev.iterate(b"zzz")) == []
    # a loop left early closes the device's iterator: more than its 16 handles in a row
    for _ in range(20):
        for key in dev.iterate(b"usr"):
            break
    it = dev.iterate(b"usr")
    next(it)
    it.close()
    with pytest.raises(ValueError, match="at most 4 bytes"):
        dev.iterate(b"toolong")
    with pytest.raises(unvme.KvError) as e:
        dev.iterate(b"usr", bitmask=0x00FF0000)
    assert e.value.name == "KV_ERR_DD_ITERATE_COND_INVALID"


def test_one_sdk_per_process(dev):
    with pytest.raises(unvme.KvError) as e:
        unvme.KvSdk(["emu://other?ns=kv:64M"])
    assert e.value.name == "KV_ERR_SDK_OPEN"


def test_bad_device():
    with pytest.raises(unvme.KvError) as e:
        unvme.KvSdk(["emu://bad?ns=kv:3Q"])
    assert e.value.name == "KV_ERR_DD_NO_DEVICE"
    # and the SDK can start afterwards
    with unvme.KvSdk(["emu://good?ns=kv:64M"]) as sdk:
        assert len(sdk.devices) == 1


def test_several_devices():
    with unvme.KvSdk(["emu://kva?ns=kv:64M", "emu://kvb?ns=kv:64M"]) as sdk:
        a, b = sdk.devices
        a.store(b"only-a", b"1")
        assert a.exist(b"only-a") and not b.exist(b"only-a")


def test_result_names_match_the_header():
    text = (REPO / "include/unvme/kv/kv_types.h").read_text()
    body = text[text.index("typedef enum kv_result {"):text.index("} kv_result;")]
    header = {n: int(v, 0) for n, v in re.findall(r"\b(KV_\w+) = (0x[0-9A-Fa-f]+|\d+),", body)}
    assert header == kv_results.KV_RESULTS
    assert kv_results.kv_result_name(0x12345) == "unknown kv_result"
