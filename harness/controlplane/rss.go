package controlplane

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// PeakRSS returns the peak resident set size, in bytes, of this process and
// of its kube-apiserver and etcd children, from /proc (VmHWM), keyed by
// "self", "kube-apiserver" and "etcd". It is for benchmarks and reports; on
// a system without /proc it returns an error.
func PeakRSS() (map[string]int64, error) {
	self := os.Getpid()
	out := map[string]int64{}
	hwm, _, err := procStatus(self)
	if err != nil {
		return nil, err
	}
	out["self"] = hwm
	for _, c := range controlPlaneChildren() {
		out[c.comm] = max(out[c.comm], c.peakRSS)
	}
	return out, nil
}

// procStatus reads VmHWM (in bytes) and PPid from /proc/PID/status.
func procStatus(pid int) (hwm int64, ppid int, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ":")
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		switch k {
		case "VmHWM":
			kb, _ := strconv.ParseInt(f[0], 10, 64)
			hwm = kb * 1024
		case "PPid":
			ppid, _ = strconv.Atoi(f[0])
		}
	}
	return hwm, ppid, sc.Err()
}
