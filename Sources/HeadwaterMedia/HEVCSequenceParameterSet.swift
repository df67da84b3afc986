/// The parts of an H.265 `seq_parameter_set_rbsp()` (ITU-T H.265 §7.3.2.2) that HLS needs: the
/// `profile_tier_level()` for the codec string and the size after the conformance window.
///
/// The VUI is not parsed (it sits behind the short-term reference picture sets), so HEVC frame
/// rates come from PTS deltas.
struct HEVCSequenceParameterSet: Hashable, Sendable {
    var profileSpace: UInt8
    var tierFlag: Bool
    var profileIDC: UInt8
    /// general_profile_compatibility_flag[0…31] as read, flag 0 in the most significant bit.
    var compatibilityFlags: UInt32
    /// The 48 bits from general_progressive_source_flag to general_inbld_flag/reserved bit.
    var constraintBytes: [UInt8]
    var levelIDC: UInt8
    var chromaFormatIDC: Int
    var width: Int
    var height: Int

    /// ISO/IEC 14496-15 Annex E: `hvc1.[A|B|C]<profile>.<compat, bit-reversed hex>.<L|H><level>[.<constraint bytes>]`,
    /// trailing zero constraint bytes omitted.
    var codec: String {
        let space = ["", "A", "B", "C"][Int(profileSpace & 3)]
        var reversed: UInt32 = 0
        for bit in 0..<32 where compatibilityFlags & (UInt32(1) << UInt32(31 - bit)) != 0 {
            reversed |= UInt32(1) << UInt32(bit)
        }
        var text = "hvc1.\(space)\(profileIDC).\(String(reversed, radix: 16, uppercase: true))"
        text += ".\(tierFlag ? "H" : "L")\(levelIDC)"
        var constraints = constraintBytes
        while let last = constraints.last, last == 0 { constraints.removeLast() }
        for byte in constraints { text += "." + hexString(UInt64(byte), digits: 2, uppercase: true) }
        return text
    }

    /// Parses an SPS RBSP: the NAL unit without its two-byte header, emulation prevention removed.
    init(rbsp: [UInt8]) throws(BitstreamError) {
        var reader = RBSPReader(rbsp)
        try reader.skip(4, "sps_video_parameter_set_id")
        let maxSubLayersMinus1 = Int(try reader.bits(3, "sps_max_sub_layers_minus1"))
        guard maxSubLayersMinus1 <= 6 else { throw .outOfRange("sps_max_sub_layers_minus1", UInt64(maxSubLayersMinus1)) }
        try reader.skip(1, "sps_temporal_id_nesting_flag")

        // profile_tier_level(1, sps_max_sub_layers_minus1), §7.3.3
        profileSpace = UInt8(try reader.bits(2, "general_profile_space"))
        tierFlag = try reader.flag("general_tier_flag")
        profileIDC = UInt8(try reader.bits(5, "general_profile_idc"))
        compatibilityFlags = UInt32(try reader.bits(32, "general_profile_compatibility_flag"))
        var constraints: [UInt8] = []
        for _ in 0..<6 { constraints.append(UInt8(try reader.bits(8, "general_constraint_flags"))) }
        constraintBytes = constraints
        levelIDC = UInt8(try reader.bits(8, "general_level_idc"))
        var subLayerProfilePresent: [Bool] = []
        var subLayerLevelPresent: [Bool] = []
        for _ in 0..<maxSubLayersMinus1 {
            subLayerProfilePresent.append(try reader.flag("sub_layer_profile_present_flag"))
            subLayerLevelPresent.append(try reader.flag("sub_layer_level_present_flag"))
        }
        if maxSubLayersMinus1 > 0 {
            try reader.skip(2 * (8 - maxSubLayersMinus1), "reserved_zero_2bits")
        }
        for layer in 0..<maxSubLayersMinus1 {
            if subLayerProfilePresent[layer] { try reader.skip(88, "sub_layer_profile") }
            if subLayerLevelPresent[layer] { try reader.skip(8, "sub_layer_level_idc") }
        }

        _ = try reader.ue("sps_seq_parameter_set_id", max: 15)
        chromaFormatIDC = Int(try reader.ue("chroma_format_idc", max: 3))
        var separateColourPlane = false
        if chromaFormatIDC == 3 { separateColourPlane = try reader.flag("separate_colour_plane_flag") }
        let lumaWidth = Int(try reader.ue("pic_width_in_luma_samples"))
        let lumaHeight = Int(try reader.ue("pic_height_in_luma_samples"))
        // Table 6-1: SubWidthC/SubHeightC (1 for monochrome and separate colour planes).
        let chromaArrayType = separateColourPlane ? 0 : chromaFormatIDC
        let subWidthC = chromaArrayType == 1 || chromaArrayType == 2 ? 2 : 1
        let subHeightC = chromaArrayType == 1 ? 2 : 1
        var crop = (left: 0, right: 0, top: 0, bottom: 0)
        if try reader.flag("conformance_window_flag") {
            crop.left = Int(try reader.ue("conf_win_left_offset"))
            crop.right = Int(try reader.ue("conf_win_right_offset"))
            crop.top = Int(try reader.ue("conf_win_top_offset"))
            crop.bottom = Int(try reader.ue("conf_win_bottom_offset"))
        }
        width = lumaWidth - subWidthC * (crop.left + crop.right)
        height = lumaHeight - subHeightC * (crop.top + crop.bottom)
        guard width > 0, height > 0 else {
            throw BitstreamError(description: "conformance window leaves no picture (\(width)x\(height))")
        }
    }
}
