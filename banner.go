package main

import (
	"fmt"
	"io"
	"net"

	"tessera/server"
)

// printBanner writes what a user needs first, in plain text: the S3
// endpoint and the status page as URLs to paste, then the keys on the
// first start (when the secrets file was made) or where they are on later
// ones. keysFromEnv says TESSERA_ACCESS_KEY and TESSERA_SECRET_KEY gave
// the keys. Scripts read the "S3 endpoint: ", "AccessKey: " and
// "SecretKey: " lines.
func printBanner(w io.Writer, srv *server.Embedded, keysFromEnv bool) {
	gw := srv.Gateway()
	fmt.Fprintf(w, "S3 endpoint: %s\n", endpointURL(gw.S3Scheme(), srv.S3Addr()))
	fmt.Fprintf(w, "Status page: %s\n", endpointURL("http", srv.WebAddr()))
	creds := srv.Credentials()
	switch {
	case srv.FirstStart():
		fmt.Fprintf(w, "AccessKey: %s\nSecretKey: %s\n", creds.AccessKey, creds.SecretKey)
		fmt.Fprintf(w, "Keys saved in %s; later starts do not print them.\n", srv.SecretsFile())
	case keysFromEnv:
		fmt.Fprintln(w, "Keys: from TESSERA_ACCESS_KEY and TESSERA_SECRET_KEY")
	default:
		fmt.Fprintf(w, "Keys: in %s\n", srv.SecretsFile())
	}
}

// endpointURL is the URL a client on this host dials for a listener's
// address: an unspecified host (":9000", "[::]:9000", "0.0.0.0:9000")
// becomes 127.0.0.1, which `aws --endpoint-url` and browsers accept;
// a specific host is kept.
func endpointURL(scheme, addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return scheme + "://" + addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}
