import NIOCore
import NIOHTTP1

/// NIO's `HTTPRequestDecoder`, with one distinction added that its parser (llhttp) does not make.
/// llhttp knows a fixed list of methods and fails every other request line alike
/// (`HTTPParserError.invalidMethod`): a token it does not know (`FOO /x HTTP/1.1`: a method the
/// server does not implement, 501, RFC 9110 §9.1) and bytes that are no request line at all (a TLS
/// ClientHello sent to the plain port: 400, RFC 9112 §3). When it fails so, the bytes it was given
/// still begin at the failing request (the decoder moves its reader index past whole requests and
/// bodies only), so their first line tells the two apart: a token and a space is a method, left as
/// `invalidMethod`; anything else becomes `invalidConstant`, llhttp's word for a request line that
/// is not HTTP's. ``ProtocolErrorResponder`` answers each.
///
/// (A request pipelined behind others in one read is judged by the first request's line, which
/// the reader index still points at: it gets 501 where 400 would be more exact.)
struct HTTP1RequestDecoder: ByteToMessageDecoder {
    typealias InboundOut = HTTPServerRequestPart

    private let decoder: HTTPRequestDecoder

    init(limits: NIOHTTPDecoderLimitConfiguration) {
        decoder = HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes, limitConfiguration: limits)
    }

    func decoderAdded(context: ChannelHandlerContext) {
        decoder.decoderAdded(context: context)
    }

    func decoderRemoved(context: ChannelHandlerContext) {
        decoder.decoderRemoved(context: context)
    }

    func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        do {
            return try decoder.decode(context: context, buffer: &buffer)
        } catch HTTPParserError.invalidMethod {
            throw Self.methodError(startOf: buffer)
        }
    }

    func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        do {
            return try decoder.decodeLast(context: context, buffer: &buffer, seenEOF: seenEOF)
        } catch HTTPParserError.invalidMethod {
            throw Self.methodError(startOf: buffer)
        }
    }

    /// `invalidMethod` if `buffer` begins with a method-shaped token (`tchar`s, then a space), else
    /// `invalidConstant`.
    static func methodError(startOf buffer: ByteBuffer) -> HTTPParserError {
        buffer.withUnsafeReadableBytes { bytes in
            guard let space = bytes.prefix(64).firstIndex(of: UInt8(ascii: " ")), space > 0,
                bytes[..<space].allSatisfy(HTTPSyntax.isTokenCharacter)
            else { return .invalidConstant }
            return .invalidMethod
        }
    }
}
