import HeadwaterHLS
import Testing

@Suite("Variable references and A13")
struct VariableReferenceTests {
    @Test("references are {$name} with [a-zA-Z0-9-_] names; anything else is text")
    func references() {
        #expect(VariableReference.names(in: "{$host}/{$path-1}/{$x_y}.ts") == ["host", "path-1", "x_y"])
        #expect(VariableReference.names(in: "{$}/{$a b}/{host}/$x/{$a") == [])
        #expect(!VariableReference.contains("AES-128") && VariableReference.contains("{$m}"))
        #expect(VariableReference.substitute("{$a}-{$b}", ["a": "1", "b": "2"]) == "1-2")
        #expect(VariableReference.substitute("{$a}-{$c}", ["a": "1"]) == nil)
    }

    @Test("a hexadecimal-sequence may hold references (§4.3); an enumerated-string may not")
    func attributeTypes() {
        #expect(AttributeType.hexadecimalSequence.accepts(.token("0x{$iv}")))
        #expect(AttributeType.hexadecimalSequence.accepts(.token("{$iv}")))
        #expect(AttributeType.hexadecimalSequence.accepts(.token("0x0F{$rest}")))
        #expect(!AttributeType.hexadecimalSequence.accepts(.token("0x{$iv}G")))
        #expect(!AttributeType.hexadecimalSequence.accepts(.token("{iv}")))
        #expect(!AttributeType.enumeratedString.accepts(.token("{$method}")))
        #expect(AttributeType.enumeratedString.accepts(.token("AES-128")))
    }

    @Test("A13: used before its EXT-X-DEFINE, never defined, or defined above (by NAME, IMPORT or QUERYPARAM)")
    func a13() {
        let text = """
            #EXTM3U
            #EXT-X-VERSION:11
            #EXT-X-DEFINE:IMPORT="base"
            #EXT-X-DEFINE:QUERYPARAM="token"
            #EXT-X-TARGETDURATION:6
            #EXTINF:6.000,
            {$base}/a.ts?t={$token}
            # a comment mentioning {$nothing}
            #EXTINF:6.000,
            {$late}/b.ts?x={$late}
            #EXT-X-DEFINE:NAME="late",VALUE="v"
            #EXT-X-KEY:METHOD=AES-128,URI="{$late}/k",IV=0x{$never}

            """
        let problems = PlaylistValidator.undefinedVariables(in: Array(text.utf8))
        #expect(problems == [
            .init(name: "late", line: 10, definedAt: 11),
            .init(name: "never", line: 12, definedAt: nil),
        ])
        let issues = PlaylistValidator.checkVariableReferences(Array(text.utf8))
        #expect(issues.map(\.rule) == ["A13", "A13"] && issues.allSatisfy { $0.severity == .error })
        #expect(issues.map(\.location) == [.line(10), .line(12)])
        #expect(PlaylistValidator.undefinedVariables(in: Array("#EXTM3U\n#EXT-X-TARGETDURATION:6\n".utf8)).isEmpty)
    }
}
