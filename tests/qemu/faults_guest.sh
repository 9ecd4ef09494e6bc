# SPDX-License-Identifier: BSD-3-Clause
# Sourced by tests/qemu/guest.sh (its helpers and controller names): the driver's fault paths on
# QEMU's controllers, each with I/O in flight: a controller reset, a fatal status (CSTS.CFS),
# the device unbound from vfio-pci, and a PCIe removal and re-insertion through QEMU's
# device_del / device_add. `scripts/qemu/run.sh --only faults` runs them alone.
# alone, nothing has bound the fault controller to vfio-pci yet
if [ "$(basename "$(readlink /sys/bus/pci/devices/$N1/driver)")" != vfio-pci ]; then
	NRHUGE=256 t faults-setup $SETUP config $N1
fi
t fault-reset-with-io-in-flight $VT reset-inflight $N1
t fault-controller-fatal-status $VT cfs $N1
t fault-unbind-with-io-in-flight $VT unbind $N1
t vfio-works-after-unbind-rebind $UNVME id-ctrl $N1
# real PCIe hot-plug: QEMU's device_del / device_add through the host's agent
if [ -d /sys/bus/pci/devices/$NH ]; then
	t hotplug-setup $SETUP config $NH
	t hotplug-pcie-removal-and-reinsertion $VT hotplug $NH
	sed -n 's/^\(PASS\|#\)/    &/p' $W/out
else
	fail hotplug-pcie-removal-and-reinsertion "no device at $NH (the hot-plug root port)"
fi
