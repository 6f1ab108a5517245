//! One `tool_pack!` with 200 `#[pi_tool]` tools compiles and keeps them in order: the
//! pack's expansion has no recursion whose depth grows with the number of items (a
//! recursive `macro_rules!` hit rustc's limit of 128 at about 120 items), and the
//! duplicate check (one constant per item against every earlier item) stays quick.

use pi_tool_core::pack::ToolPack;
use pi_tool_core::{ToolError, pi_tool, tool_pack};

macro_rules! tools {
    ($($function:ident $tool:ident),* $(,)?) => {
        $(
            #[doc = concat!("The tool ", stringify!($function), ".")]
            #[pi_tool]
            pub async fn $function() -> Result<String, ToolError> {
                Ok(String::new())
            }
        )*

        fn pack() -> ToolPack {
            tool_pack![$($tool),*]
        }
    };
}

tools![
    tool_000 Tool000, tool_001 Tool001, tool_002 Tool002, tool_003 Tool003, tool_004 Tool004, tool_005 Tool005, tool_006 Tool006, tool_007 Tool007,
    tool_008 Tool008, tool_009 Tool009, tool_010 Tool010, tool_011 Tool011, tool_012 Tool012, tool_013 Tool013, tool_014 Tool014, tool_015 Tool015,
    tool_016 Tool016, tool_017 Tool017, tool_018 Tool018, tool_019 Tool019, tool_020 Tool020, tool_021 Tool021, tool_022 Tool022, tool_023 Tool023,
    tool_024 Tool024, tool_025 Tool025, tool_026 Tool026, tool_027 Tool027, tool_028 Tool028, tool_029 Tool029, tool_030 Tool030, tool_031 Tool031,
    tool_032 Tool032, tool_033 Tool033, tool_034 Tool034, tool_035 Tool035, tool_036 Tool036, tool_037 Tool037, tool_038 Tool038, tool_039 Tool039,
    tool_040 Tool040, tool_041 Tool041, tool_042 Tool042, tool_043 Tool043, tool_044 Tool044, tool_045 Tool045, tool_046 Tool046, tool_047 Tool047,
    tool_048 Tool048, tool_049 Tool049, tool_050 Tool050, tool_051 Tool051, tool_052 Tool052, tool_053 Tool053, tool_054 Tool054, tool_055 Tool055,
    tool_056 Tool056, tool_057 Tool057, tool_058 Tool058, tool_059 Tool059, tool_060 Tool060, tool_061 Tool061, tool_062 Tool062, tool_063 Tool063,
    tool_064 Tool064, tool_065 Tool065, tool_066 Tool066, tool_067 Tool067, tool_068 Tool068, tool_069 Tool069, tool_070 Tool070, tool_071 Tool071,
    tool_072 Tool072, tool_073 Tool073, tool_074 Tool074, tool_075 Tool075, tool_076 Tool076, tool_077 Tool077, tool_078 Tool078, tool_079 Tool079,
    tool_080 Tool080, tool_081 Tool081, tool_082 Tool082, tool_083 Tool083, tool_084 Tool084, tool_085 Tool085, tool_086 Tool086, tool_087 Tool087,
    tool_088 Tool088, tool_089 Tool089, tool_090 Tool090, tool_091 Tool091, tool_092 Tool092, tool_093 Tool093, tool_094 Tool094, tool_095 Tool095,
    tool_096 Tool096, tool_097 Tool097, tool_098 Tool098, tool_099 Tool099, tool_100 Tool100, tool_101 Tool101, tool_102 Tool102, tool_103 Tool103,
    tool_104 Tool104, tool_105 Tool105, tool_106 Tool106, tool_107 Tool107, tool_108 Tool108, tool_109 Tool109, tool_110 Tool110, tool_111 Tool111,
    tool_112 Tool112, tool_113 Tool113, tool_114 Tool114, tool_115 Tool115, tool_116 Tool116, tool_117 Tool117, tool_118 Tool118, tool_119 Tool119,
    tool_120 Tool120, tool_121 Tool121, tool_122 Tool122, tool_123 Tool123, tool_124 Tool124, tool_125 Tool125, tool_126 Tool126, tool_127 Tool127,
    tool_128 Tool128, tool_129 Tool129, tool_130 Tool130, tool_131 Tool131, tool_132 Tool132, tool_133 Tool133, tool_134 Tool134, tool_135 Tool135,
    tool_136 Tool136, tool_137 Tool137, tool_138 Tool138, tool_139 Tool139, tool_140 Tool140, tool_141 Tool141, tool_142 Tool142, tool_143 Tool143,
    tool_144 Tool144, tool_145 Tool145, tool_146 Tool146, tool_147 Tool147, tool_148 Tool148, tool_149 Tool149, tool_150 Tool150, tool_151 Tool151,
    tool_152 Tool152, tool_153 Tool153, tool_154 Tool154, tool_155 Tool155, tool_156 Tool156, tool_157 Tool157, tool_158 Tool158, tool_159 Tool159,
    tool_160 Tool160, tool_161 Tool161, tool_162 Tool162, tool_163 Tool163, tool_164 Tool164, tool_165 Tool165, tool_166 Tool166, tool_167 Tool167,
    tool_168 Tool168, tool_169 Tool169, tool_170 Tool170, tool_171 Tool171, tool_172 Tool172, tool_173 Tool173, tool_174 Tool174, tool_175 Tool175,
    tool_176 Tool176, tool_177 Tool177, tool_178 Tool178, tool_179 Tool179, tool_180 Tool180, tool_181 Tool181, tool_182 Tool182, tool_183 Tool183,
    tool_184 Tool184, tool_185 Tool185, tool_186 Tool186, tool_187 Tool187, tool_188 Tool188, tool_189 Tool189, tool_190 Tool190, tool_191 Tool191,
    tool_192 Tool192, tool_193 Tool193, tool_194 Tool194, tool_195 Tool195, tool_196 Tool196, tool_197 Tool197, tool_198 Tool198, tool_199 Tool199,
];

#[test]
fn two_hundred_tools_in_one_pack() {
    let pack = pack();
    let names: Vec<&str> = pack.names().collect();
    let expected: Vec<String> = (0..200).map(|i| format!("tool_{i:03}")).collect();
    assert_eq!(names, expected);
}
