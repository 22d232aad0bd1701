# `cmake --install BUILD_DIR [--prefix PREFIX]`: what another CMake project needs to use the C++
# client —
#   bin/taxel-server, bin/taxel-cli
#   include/taxel/*.h (client, replica set, sharded scene, mesh files, PNG, spec JSON, scene
#   bundles, version; not model_import.h),
#   include/taxel/v1/*.pb.h and include/google/rpc/*.pb.h (the generated messages and stub)
#   lib/libtaxel_*.a and lib/cmake/Taxel/ (TaxelConfig.cmake, its version file and targets)
# so that
#   find_package(Taxel 0.1 REQUIRED)
#   target_link_libraries(app PRIVATE Taxel::client)
# works (tests/install/install_test.sh builds such a project against an installed tree).
include(CMakePackageConfigHelpers)

set(TAXEL_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/Taxel)
set_target_properties(taxel_client PROPERTIES EXPORT_NAME client)
set_target_properties(taxel_proto PROPERTIES EXPORT_NAME proto)
set_target_properties(taxel_version PROPERTIES EXPORT_NAME version)
# Link-only dependencies of the static client (their compile options never reach a consumer).
set_target_properties(taxel_nonzero_mask PROPERTIES EXPORT_NAME internal_nonzero_mask)
set_target_properties(taxel_options PROPERTIES EXPORT_NAME internal_options)

install(TARGETS taxel_client taxel_proto taxel_version taxel_nonzero_mask taxel_options
        EXPORT TaxelTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS taxel-server taxel-cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# model_import.h belongs to taxel_model_import (MuJoCo), which is not installed.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/client/cpp/taxel/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/taxel
        FILES_MATCHING PATTERN "*.h" PATTERN "model_import.h" EXCLUDE)
install(FILES ${PROJECT_BINARY_DIR}/generated/taxel/version.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/taxel)
install(DIRECTORY ${PROJECT_BINARY_DIR}/proto/gen/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.pb.h")
install(EXPORT TaxelTargets NAMESPACE Taxel:: DESTINATION ${TAXEL_INSTALL_CMAKEDIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/TaxelConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/TaxelConfig.cmake INSTALL_DESTINATION ${TAXEL_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/TaxelConfigVersion.cmake VERSION ${PROJECT_VERSION}
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/TaxelConfig.cmake ${PROJECT_BINARY_DIR}/TaxelConfigVersion.cmake
        DESTINATION ${TAXEL_INSTALL_CMAKEDIR})
