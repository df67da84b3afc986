/// The parts of an H.264 `seq_parameter_set_rbsp()` (ITU-T H.264 §7.3.2.1.1) that HLS needs: the
/// codec string, the displayed size after frame cropping, and the VUI timing.
struct H264SequenceParameterSet: Hashable, Sendable {
    var profileIDC: UInt8
    /// constraint_set0_flag … constraint_set5_flag and reserved_zero_2bits, as one byte.
    var constraintFlags: UInt8
    var levelIDC: UInt8
    var chromaFormatIDC: Int
    var frameMBSOnly: Bool
    /// Width in luma samples after `frame_crop_left/right_offset`.
    var width: Int
    /// Height in luma samples after `frame_crop_top/bottom_offset`.
    var height: Int
    /// The VUI timing (Annex E), when `timing_info_present_flag` is set and both values are non-zero.
    var timing: VUITiming?

    /// RFC 6381 `avc1.PPCCLL`, lower-case hex.
    var codec: String {
        "avc1." + hexString(UInt64(profileIDC), digits: 2, uppercase: false)
            + hexString(UInt64(constraintFlags), digits: 2, uppercase: false)
            + hexString(UInt64(levelIDC), digits: 2, uppercase: false)
    }

    /// Profiles whose SPS carries chroma_format_idc, bit depths and scaling matrices (§7.3.2.1.1).
    private static let highProfiles: Set<UInt8> = [100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135]

    /// Parses an SPS RBSP: the NAL unit without its one-byte header, emulation prevention removed.
    init(rbsp: [UInt8]) throws(BitstreamError) {
        var reader = RBSPReader(rbsp)
        profileIDC = UInt8(try reader.bits(8, "profile_idc"))
        constraintFlags = UInt8(try reader.bits(8, "constraint_set_flags"))
        levelIDC = UInt8(try reader.bits(8, "level_idc"))
        _ = try reader.ue("seq_parameter_set_id", max: 31)

        chromaFormatIDC = 1
        var separateColourPlane = false
        if Self.highProfiles.contains(profileIDC) {
            chromaFormatIDC = Int(try reader.ue("chroma_format_idc", max: 3))
            if chromaFormatIDC == 3 {
                separateColourPlane = try reader.flag("separate_colour_plane_flag")
            }
            _ = try reader.ue("bit_depth_luma_minus8", max: 6)
            _ = try reader.ue("bit_depth_chroma_minus8", max: 6)
            try reader.skip(1, "qpprime_y_zero_transform_bypass_flag")
            if try reader.flag("seq_scaling_matrix_present_flag") {
                let listCount = chromaFormatIDC == 3 ? 12 : 8
                for list in 0..<listCount {
                    if try reader.flag("seq_scaling_list_present_flag") {
                        try Self.skipScalingList(&reader, size: list < 6 ? 16 : 64)
                    }
                }
            }
        }

        _ = try reader.ue("log2_max_frame_num_minus4", max: 12)
        let pocType = try reader.ue("pic_order_cnt_type", max: 2)
        if pocType == 0 {
            _ = try reader.ue("log2_max_pic_order_cnt_lsb_minus4", max: 12)
        } else if pocType == 1 {
            try reader.skip(1, "delta_pic_order_always_zero_flag")
            _ = try reader.se("offset_for_non_ref_pic")
            _ = try reader.se("offset_for_top_to_bottom_field")
            let cycle = try reader.ue("num_ref_frames_in_pic_order_cnt_cycle", max: 255)
            for _ in 0..<cycle { _ = try reader.se("offset_for_ref_frame") }
        }
        _ = try reader.ue("max_num_ref_frames")
        try reader.skip(1, "gaps_in_frame_num_value_allowed_flag")
        let widthInMBs = Int(try reader.ue("pic_width_in_mbs_minus1")) + 1
        let heightInMapUnits = Int(try reader.ue("pic_height_in_map_units_minus1")) + 1
        frameMBSOnly = try reader.flag("frame_mbs_only_flag")
        if !frameMBSOnly { try reader.skip(1, "mb_adaptive_frame_field_flag") }
        try reader.skip(1, "direct_8x8_inference_flag")

        // §7.4.2.1.1: crop units depend on ChromaArrayType and frame_mbs_only_flag.
        let fieldFactor = frameMBSOnly ? 1 : 2
        var cropUnitX = 1
        var cropUnitY = fieldFactor
        let chromaArrayType = separateColourPlane ? 0 : chromaFormatIDC
        if chromaArrayType != 0 {
            cropUnitX = chromaArrayType == 3 ? 1 : 2  // SubWidthC
            cropUnitY = (chromaArrayType == 1 ? 2 : 1) * fieldFactor  // SubHeightC × (2 − frame_mbs_only_flag)
        }
        var crop = (left: 0, right: 0, top: 0, bottom: 0)
        if try reader.flag("frame_cropping_flag") {
            crop.left = Int(try reader.ue("frame_crop_left_offset"))
            crop.right = Int(try reader.ue("frame_crop_right_offset"))
            crop.top = Int(try reader.ue("frame_crop_top_offset"))
            crop.bottom = Int(try reader.ue("frame_crop_bottom_offset"))
        }
        width = widthInMBs * 16 - cropUnitX * (crop.left + crop.right)
        height = fieldFactor * heightInMapUnits * 16 - cropUnitY * (crop.top + crop.bottom)
        guard width > 0, height > 0 else {
            throw BitstreamError(description: "frame cropping leaves no picture (\(width)x\(height))")
        }

        timing = nil
        // A truncated or exotic VUI must not hide the size we already have: timing is best effort.
        if (try? reader.flag("vui_parameters_present_flag")) == true {
            timing = (try? Self.vuiTiming(&reader)).flatMap { $0 }
        }
    }

    /// `scaling_list()` (§7.3.2.1.1.1): read only to skip it.
    private static func skipScalingList(_ reader: inout RBSPReader, size: Int) throws(BitstreamError) {
        var lastScale: Int64 = 8
        var nextScale: Int64 = 8
        for _ in 0..<size {
            if nextScale != 0 {
                let delta = try reader.se("delta_scale")
                guard delta >= -128, delta <= 127 else { throw .outOfRange("delta_scale", UInt64(bitPattern: delta)) }
                nextScale = (lastScale + delta + 256) % 256
            }
            lastScale = nextScale == 0 ? lastScale : nextScale
        }
    }

    /// `vui_parameters()` (Annex E.1.1) up to and including the timing information.
    private static func vuiTiming(_ reader: inout RBSPReader) throws(BitstreamError) -> VUITiming? {
        if try reader.flag("aspect_ratio_info_present_flag") {
            if try reader.bits(8, "aspect_ratio_idc") == 255 {
                try reader.skip(32, "sar_width/sar_height")
            }
        }
        if try reader.flag("overscan_info_present_flag") {
            try reader.skip(1, "overscan_appropriate_flag")
        }
        if try reader.flag("video_signal_type_present_flag") {
            try reader.skip(4, "video_format/video_full_range_flag")
            if try reader.flag("colour_description_present_flag") {
                try reader.skip(24, "colour_primaries/transfer_characteristics/matrix_coefficients")
            }
        }
        if try reader.flag("chroma_loc_info_present_flag") {
            _ = try reader.ue("chroma_sample_loc_type_top_field", max: 5)
            _ = try reader.ue("chroma_sample_loc_type_bottom_field", max: 5)
        }
        guard try reader.flag("timing_info_present_flag") else { return nil }
        let numUnitsInTick = UInt32(try reader.bits(32, "num_units_in_tick"))
        let timeScale = UInt32(try reader.bits(32, "time_scale"))
        guard numUnitsInTick > 0, timeScale > 0 else { return nil }
        return VUITiming(numUnitsInTick: numUnitsInTick, timeScale: timeScale)
    }
}

/// `num_units_in_tick` and `time_scale` from a VUI: one frame lasts `2 × num_units_in_tick / time_scale`
/// seconds for frame-coded video (H.264 Annex E, equation E-2 with `fixed_frame_rate_flag`).
struct VUITiming: Hashable, Sendable {
    var numUnitsInTick: UInt32
    var timeScale: UInt32
}
