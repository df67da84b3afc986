import HeadwaterHTTP
import Testing

struct AcceptEncodingCase: CustomTestStringConvertible, Sendable {
    let header: String?
    let gzip: Bool
    init(_ header: String?, _ gzip: Bool) {
        self.header = header
        self.gzip = gzip
    }
    var testDescription: String { header.map { "'\($0)'" } ?? "nil" }
}

@Test(arguments: [
    AcceptEncodingCase(nil, false),
    AcceptEncodingCase("", false),
    AcceptEncodingCase("   ", false),
    AcceptEncodingCase("gzip", true),
    AcceptEncodingCase("GZIP", true),
    AcceptEncodingCase("GZip", true),
    AcceptEncodingCase("x-gzip", true),
    AcceptEncodingCase("X-GZIP", true),
    AcceptEncodingCase("gzip, deflate, br", true),
    AcceptEncodingCase("br, gzip", true),
    AcceptEncodingCase("deflate, br", false),
    AcceptEncodingCase("identity", false),
    AcceptEncodingCase("identity;q=1", false),
    AcceptEncodingCase("gzip;q=0", false),
    AcceptEncodingCase("gzip;q=0.", false),
    AcceptEncodingCase("gzip;q=0.000", false),
    AcceptEncodingCase("gzip;q=0.001", true),
    AcceptEncodingCase("gzip;q=0.5", true),
    AcceptEncodingCase("gzip;q=1", true),
    AcceptEncodingCase("gzip;q=1.", true),
    AcceptEncodingCase("gzip;q=1.0", true),
    AcceptEncodingCase("gzip;q=1.000", true),
    AcceptEncodingCase("gzip;Q=0.5", true),
    AcceptEncodingCase("gzip ; q=0.5", true),
    AcceptEncodingCase("gzip;\tq=0.5 ", true),
    AcceptEncodingCase("  gzip  ", true),
    AcceptEncodingCase("gzip;q=1.001", false),
    AcceptEncodingCase("gzip;q=1.5", false),
    AcceptEncodingCase("gzip;q=2", false),
    AcceptEncodingCase("gzip;q=0.0001", false),
    AcceptEncodingCase("gzip;q=.5", false),
    AcceptEncodingCase("gzip;q=", false),
    AcceptEncodingCase("gzip;q=abc", false),
    AcceptEncodingCase("gzip;q=-1", false),
    AcceptEncodingCase("gzip;q=NaN", false),
    AcceptEncodingCase("gzip;q=1e0", false),
    AcceptEncodingCase("gzip;q = 0.5", false),
    AcceptEncodingCase("gzip;level=9", false),
    AcceptEncodingCase("gzip;q=0.5;x=1", false),
    AcceptEncodingCase("gzip;", false),
    AcceptEncodingCase("*", true),
    AcceptEncodingCase("*;q=0.1", true),
    AcceptEncodingCase("*;q=0", false),
    AcceptEncodingCase("*;q=bad", false),
    AcceptEncodingCase("gzip;q=0, *", false),
    AcceptEncodingCase("*, gzip;q=0", false),
    AcceptEncodingCase("gzip, *;q=0", true),
    AcceptEncodingCase("deflate, gzip;q=0", false),
    AcceptEncodingCase("br;q=1, *;q=0", false),
    AcceptEncodingCase("br;q=1, *;q=0.5", true),
    AcceptEncodingCase("identity, *;q=0", false),
    AcceptEncodingCase("gzip;q=0.8, gzip;q=0", false),
    AcceptEncodingCase("gzips", false),
    AcceptEncodingCase("gzip2, gz", false),
    AcceptEncodingCase("xgzip", false),
    AcceptEncodingCase(",,gzip,,", true),
    AcceptEncodingCase("br , gzip ;q=0.9 , deflate", true),
    AcceptEncodingCase("@@@, gzip", true),
    AcceptEncodingCase("gzip junk", false),
    AcceptEncodingCase("deflate;q=oops, gzip", true),
])
func acceptsGzip(_ c: AcceptEncodingCase) {
    #expect(AcceptEncoding.acceptsGzip(c.header) == c.gzip)
}
