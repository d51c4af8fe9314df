package server

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// sysNet is where Linux describes network interfaces.
const sysNet = "/sys/class/net"

// linkRate is the bytes/s a peer advertising api can send at best: the
// speed of the interface holding api's address, lowered to sendCap when
// that is set; 0 when neither is known (loopback, virtual links, other
// systems).
func linkRate(api string, sendCap float64) float64 {
	nic := nicRate(api)
	if sendCap > 0 && (nic == 0 || sendCap < nic) {
		return sendCap
	}
	return nic
}

// nicRate reads the link speed of the interface that holds host's IP.
func nicRate(hostport string) float64 {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return 0
	}
	ip := net.ParseIP(host)
	if ip == nil || ip.IsLoopback() {
		return 0
	}
	ifaces, err := net.Interfaces()
	if err != nil {
		return 0
	}
	for _, ifc := range ifaces {
		if holds(ifc, ip) {
			return speedFile(filepath.Join(sysNet, ifc.Name, "speed"))
		}
	}
	return 0
}

func holds(ifc net.Interface, ip net.IP) bool {
	addrs, err := ifc.Addrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}

// speedFile parses a sysfs speed file (Mbit/s; -1 or unreadable when the
// link is down or has no speed) into bytes/s.
func speedFile(path string) float64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	mbit, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
	if err != nil || mbit <= 0 {
		return 0
	}
	return mbit * 1e6 / 8
}
