package gateway

import "net/http"

// anonymousOwner is reported when a request carries no access key, which
// only an Authenticator that lets unsigned requests through allows.
var anonymousOwner = ownerXML{ID: "tessera", DisplayName: "tessera"}

// requestOwner is the principal S3 reports as Owner and Initiator: the
// account whose key signed the request. tessera has one access key and no
// IAM, so the key itself is the account's stable ID; clients compare
// owners with each other (and with what they configured), never parse
// them.
func requestOwner(r *http.Request) ownerXML {
	ak := authResult(r).AccessKey
	if ak == "" {
		return anonymousOwner
	}
	return ownerXML{ID: ak, DisplayName: ak}
}
